//! OIDC authentication (`--oidc-*` flags and `--authentication-config`, reloaded when the
//! file changes) against a small TLS OIDC provider run by the test: discovery and a JWK
//! set, tokens signed with a test key. `kubectl auth whoami` shows the mapped user; expired tokens and tokens of another
//! issuer are 401.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use kas_auth::authentication::serviceaccount::jwt::sign;
use kas_auth::authentication::serviceaccount::keys::{PrivateKey, parse_private_key_pem};
use kas_auth::authentication::serviceaccount::openidmetadata::keyset_json;
use kas_e2e::tls_server::TlsServer;
use kas_e2e::{TestCluster, kubectl_with, start_cluster};
use kas_local::Role;
use kas_local::kubeconfig::Credential;
use serde_json::{Value, json};

const KID: &str = "test-key";

/// The provider: its issuer URL, the CA its certificate chains to, and the signing key.
struct Provider {
    issuer: String,
    ca_pem: String,
    key: PrivateKey,
    _server: TlsServer,
}

/// A provider on kas-e2e's TLS server: discovery (which names the issuer, known once the
/// server listens) and the JWK set.
fn start_provider() -> Provider {
    let signing = rcgen::KeyPair::generate().unwrap();
    let key = parse_private_key_pem(signing.serialize_pem().as_bytes()).unwrap();
    let mut public = key.public_key().unwrap();
    public.key_id = KID.to_owned();
    let jwks = keyset_json(&[public]);
    let issuer_url = Arc::new(OnceLock::<String>::new());
    let seen = issuer_url.clone();
    let server = TlsServer::start(move |req| {
        let issuer = seen.get().cloned().unwrap_or_default();
        let (status, body) = match req.uri().path() {
            "/.well-known/openid-configuration" => (
                200,
                json!({"issuer": issuer, "jwks_uri": format!("{issuer}/keys")}).to_string(),
            ),
            "/keys" => (200, jwks.clone()),
            _ => (404, "{}".to_owned()),
        };
        http::Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Bytes::from(body))
            .unwrap()
    });
    let issuer = server.url("");
    let _ = issuer_url.set(issuer.clone());
    Provider {
        issuer,
        ca_pem: server.ca_pem.clone(),
        key,
        _server: server,
    }
}

impl Provider {
    fn token(&self, claims: Value) -> String {
        sign(&self.key, KID, claims.to_string().as_bytes()).unwrap()
    }

    /// Claims of a token for `kas` from this issuer, valid for ten minutes, overridden by
    /// `extra`.
    fn claims(&self, extra: Value) -> Value {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let mut c = json!({
            "iss": self.issuer, "aud": "kas", "sub": "jane", "iat": now, "exp": now + 600,
            "groups": ["dev", "ops"], "roles": ["admin"],
        });
        for (k, v) in extra.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// `kubectl auth whoami` with `token`, retried while the authenticator discovers its
/// provider (it starts in the background).
fn whoami(c: &TestCluster, name: &str, token: &str) -> Value {
    let kubeconfig = c.kubeconfig_for(0, name, Credential::Token(token));
    let start = Instant::now();
    loop {
        let out = kubectl_with(&kubeconfig, &["auth", "whoami", "-o", "json"]);
        if out.status.success() {
            return serde_json::from_slice(&out.stdout).unwrap();
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Asserts `token` is refused with 401 (call after a good token got through, so that the
/// provider has answered).
fn unauthorized(c: &TestCluster, name: &str, token: &str) {
    let kubeconfig = c.kubeconfig_for(0, name, Credential::Token(token));
    let out = kubectl_with(&kubeconfig, &["auth", "whoami", "-o", "json"]);
    assert!(!out.status.success(), "{name}: accepted");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Unauthorized"),
        "{name}: expected 401, got {stderr}"
    );
}

#[test]
fn oidc_flags_map_username_and_groups() {
    let provider = start_provider();
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("oidc-ca.crt");
    std::fs::write(&ca_file, &provider.ca_pem).unwrap();
    let flags = [
        format!("--oidc-issuer-url={}", provider.issuer),
        "--oidc-client-id=kas".to_owned(),
        format!("--oidc-ca-file={}", ca_file.display()),
        "--oidc-username-prefix=oidc:".to_owned(),
        "--oidc-groups-claim=groups".to_owned(),
        "--oidc-groups-prefix=oidc:".to_owned(),
        "--oidc-signing-algs=ES256".to_owned(),
    ];
    // Core takes them too: its TokenReviews authenticate what the aggregator does.
    let c = start_cluster(|spec| {
        for role in [Role::Aggregator, Role::Core] {
            spec.extra_args
                .entry(role)
                .or_default()
                .extend(flags.iter().cloned());
        }
    });
    let me = whoami(&c, "jane", &provider.token(provider.claims(json!({}))));
    let user = &me["status"]["userInfo"];
    assert_eq!(user["username"], "oidc:jane");
    assert_eq!(
        user["groups"],
        json!(["oidc:dev", "oidc:ops", "system:authenticated"])
    );

    let review = json!({
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
        "spec": {"token": provider.token(provider.claims(json!({})))},
    });
    let out = c.kubectl_stdin(&["create", "-o", "json"], &review.to_string());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reviewed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reviewed["status"]["authenticated"], true, "{reviewed}");
    assert_eq!(reviewed["status"]["user"]["username"], "oidc:jane");

    let expired = provider.token(provider.claims(json!({"exp": now() - 60})));
    unauthorized(&c, "expired", &expired);
    let other = provider.token(provider.claims(json!({"iss": "https://other.example.com"})));
    unauthorized(&c, "other-issuer", &other);
    let wrong_audience = provider.token(provider.claims(json!({"aud": "someone-else"})));
    unauthorized(&c, "wrong-audience", &wrong_audience);
}

#[test]
fn authentication_config_maps_with_cel() {
    let provider = start_provider();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("authentication-config.yaml");
    let ca: Vec<String> = provider
        .ca_pem
        .lines()
        .map(|l| format!("      {l}"))
        .collect();
    // Written as tools write it: renamed into place.
    let write_config = |prefix: &str| {
        let yaml = format!(
            "apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: {}
    audiences: [kas, other]
    audienceMatchPolicy: MatchAny
    certificateAuthority: |
{}
  claimValidationRules:
  - expression: \"claims.sub != 'mallory'\"
    message: mallory is not welcome
  claimMappings:
    username:
      expression: \"'{prefix}:' + claims.sub\"
    groups:
      expression: \"claims.roles.map(r, 'role:' + r)\"
    uid:
      claim: sub
    extra:
    - key: example.org/team
      valueExpression: \"'platform'\"
",
            provider.issuer,
            ca.join("\n")
        );
        let next = dir.path().join("next.yaml");
        std::fs::write(&next, yaml).unwrap();
        std::fs::rename(&next, &config).unwrap();
    };
    write_config("cel");
    let c = start_cluster(|spec| {
        spec.extra_args
            .entry(Role::Aggregator)
            .or_default()
            .push(format!("--authentication-config={}", config.display()));
    });
    let token = provider.token(provider.claims(json!({"jti": "token-1"})));
    let me = whoami(&c, "jane", &token);
    let user = &me["status"]["userInfo"];
    assert_eq!(user["username"], "cel:jane");
    assert_eq!(user["uid"], "jane");
    assert_eq!(
        user["groups"],
        json!(["role:admin", "system:authenticated"])
    );
    assert_eq!(user["extra"]["example.org/team"], json!(["platform"]));
    assert_eq!(
        user["extra"]["authentication.kubernetes.io/credential-id"],
        json!(["JTI=token-1"])
    );

    let mallory = provider.token(provider.claims(json!({"sub": "mallory"})));
    unauthorized(&c, "mallory", &mallory);
    let expired = provider.token(provider.claims(json!({"exp": now() - 60})));
    unauthorized(&c, "expired", &expired);
    let other = provider.token(provider.claims(json!({"iss": "https://other.example.com"})));
    unauthorized(&c, "other-issuer", &other);

    // A changed file is reloaded while the aggregator runs (new tokens: results are cached).
    write_config("v2");
    let start = Instant::now();
    for attempt in 0.. {
        let token = provider.token(provider.claims(json!({"jti": format!("reload-{attempt}")})));
        let me = whoami(&c, "jane", &token);
        if me["status"]["userInfo"]["username"] == "v2:jane" {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "not reloaded: {me}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    // An invalid one is ignored: the authenticators in place stay.
    std::fs::write(&config, "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt: [{}]\n").unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let token = provider.token(provider.claims(json!({"jti": "after-invalid"})));
    assert_eq!(
        whoami(&c, "jane", &token)["status"]["userInfo"]["username"],
        "v2:jane"
    );
}
