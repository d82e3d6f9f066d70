use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_util::future::BoxFuture;
use serde_json::json;

use super::config::*;
use super::*;
use crate::authentication::serviceaccount::jwt::sign;
use crate::authentication::serviceaccount::keys::{PrivateKey, parse_private_key_pem};
use crate::authentication::serviceaccount::openidmetadata::keyset_json;

mod validation;

const RSA: &str = include_str!("../../serviceaccount/testdata/rsa-pkcs1.pem");
const EC: &str = include_str!("../../serviceaccount/testdata/ec-p256-sec1.pem");
const ISSUER: &str = "https://auth.example.com";
/// 2009-11-10 23:00:00 UTC, upstream's test clock.
const NOW: u64 = 1_257_894_000;

struct FakeProvider {
    issuer: String,
    keys: Mutex<Vec<(PrivateKey, String)>>,
    cache_control: Mutex<String>,
    discovery_status: AtomicU16,
    key_fetches: AtomicUsize,
    /// What `/groups` answers to the bearer `t`: a distributed claims JWT.
    distributed: Mutex<String>,
}

impl FakeProvider {
    fn new(keys: Vec<(PrivateKey, String)>) -> Arc<FakeProvider> {
        Arc::new(FakeProvider {
            issuer: ISSUER.to_owned(),
            keys: Mutex::new(keys),
            cache_control: Mutex::new(String::new()),
            discovery_status: AtomicU16::new(200),
            key_fetches: AtomicUsize::new(0),
            distributed: Mutex::new(String::new()),
        })
    }
}

impl ProviderClient for FakeProvider {
    fn get<'a>(
        &'a self,
        url: &'a str,
        bearer: Option<&'a str>,
    ) -> BoxFuture<'a, Result<HttpResponse, String>> {
        Box::pin(async move {
            if url == format!("{ISSUER}/groups") {
                let ok = bearer == Some("t");
                return Ok(HttpResponse {
                    status: if ok { 200 } else { 401 },
                    body: self.distributed.lock().unwrap().clone().into_bytes(),
                    ..HttpResponse::default()
                });
            }
            if url == format!("{ISSUER}/.well-known/openid-configuration") {
                let status = self.discovery_status.load(Ordering::SeqCst);
                return Ok(HttpResponse {
                    status,
                    content_type: "application/json".to_owned(),
                    body: json!({"issuer": self.issuer, "jwks_uri": format!("{ISSUER}/keys")})
                        .to_string()
                        .into_bytes(),
                    ..HttpResponse::default()
                });
            }
            if url == format!("{ISSUER}/keys") {
                self.key_fetches.fetch_add(1, Ordering::SeqCst);
                let keys: Vec<_> = self
                    .keys
                    .lock()
                    .unwrap()
                    .iter()
                    .map(|(k, kid)| {
                        let mut p = k.public_key().unwrap();
                        p.key_id = kid.clone();
                        p
                    })
                    .collect();
                return Ok(HttpResponse {
                    status: 200,
                    content_type: "application/json".to_owned(),
                    cache_control: self.cache_control.lock().unwrap().clone(),
                    body: keyset_json(&keys).into_bytes(),
                });
            }
            Err(format!("Get {url:?}: dial tcp: connection refused"))
        })
    }
}

fn key(pem: &str) -> PrivateKey {
    parse_private_key_pem(pem.as_bytes()).unwrap()
}

fn token(key: &PrivateKey, kid: &str, claims: serde_json::Value) -> String {
    sign(key, kid, claims.to_string().as_bytes()).unwrap()
}

fn claims(extra: serde_json::Value) -> serde_json::Value {
    let mut c = json!({
        "iss": ISSUER, "aud": "my-client", "sub": "jane", "exp": NOW + 600, "iat": NOW,
    });
    for (k, v) in extra.as_object().unwrap() {
        c[k] = v.clone();
    }
    c
}

fn prefixed(claim: &str, prefix: &str) -> PrefixedClaimOrExpression {
    PrefixedClaimOrExpression {
        claim: claim.to_owned(),
        prefix: Some(prefix.to_owned()),
        expression: String::new(),
    }
}

fn jwt(mappings: ClaimMappings) -> JwtAuthenticator {
    JwtAuthenticator {
        issuer: Issuer {
            url: ISSUER.to_owned(),
            audiences: vec!["my-client".to_owned()],
            ..Issuer::default()
        },
        claim_mappings: mappings,
        ..JwtAuthenticator::default()
    }
}

fn clock(at: Arc<Mutex<SystemTime>>) -> Clock {
    Arc::new(move || *at.lock().unwrap())
}

fn authenticator(
    config: JwtAuthenticator,
    provider: Arc<FakeProvider>,
    algs: &[&str],
) -> (Arc<OidcAuthenticator>, Arc<Mutex<SystemTime>>) {
    let now = Arc::new(Mutex::new(UNIX_EPOCH + Duration::from_secs(NOW)));
    let a = OidcAuthenticator::new(OidcOptions {
        jwt: config,
        supported_signing_algs: algs.iter().map(|s| (*s).to_owned()).collect(),
        disallowed_issuers: Vec::new(),
        client: provider,
        now: clock(now.clone()),
    })
    .unwrap();
    (a, now)
}

fn default_mappings() -> ClaimMappings {
    ClaimMappings {
        username: prefixed("sub", ""),
        groups: prefixed("groups", ""),
        ..ClaimMappings::default()
    }
}

async fn ready(config: JwtAuthenticator, algs: &[&str]) -> (Arc<OidcAuthenticator>, PrivateKey) {
    let provider = FakeProvider::new(vec![(key(RSA), "k1".to_owned())]);
    let (a, _) = authenticator(config, provider, algs);
    a.initialize().await.unwrap();
    (a, key(RSA))
}

// ---- validation (upstream's validation_test.go) ----

#[tokio::test]
async fn maps_claims_with_prefixes() {
    let mut m = default_mappings();
    m.username = prefixed("sub", "oidc:");
    m.groups = prefixed("groups", "grp:");
    let (a, k) = ready(jwt(m), &[]).await;
    let t = token(
        &k,
        "k1",
        claims(json!({"groups": ["team-a", "team-b"], "jti": "abc"})),
    );
    let user = a.authenticate_token(&t).await.unwrap().unwrap();
    assert_eq!(user.name, "oidc:jane");
    assert_eq!(user.groups, vec!["grp:team-a", "grp:team-b"]);
    assert_eq!(
        user.extra.get(crate::user::CREDENTIAL_ID_KEY),
        Some(&vec!["JTI=abc".to_owned()])
    );
    // A single string is one group.
    let t = token(&k, "k1", claims(json!({"groups": "team-a"})));
    assert_eq!(
        a.authenticate_token(&t).await.unwrap().unwrap().groups,
        vec!["grp:team-a"]
    );
    let t = token(&k, "k1", claims(json!({"groups": 5})));
    assert_eq!(
        a.authenticate_token(&t).await.unwrap_err(),
        r#"oidc: parse groups claim "groups": json: cannot unmarshal number into Go value of type string"#
    );
    let t = token(
        &k,
        "k1",
        json!({"iss": ISSUER, "aud": "my-client", "exp": NOW + 600}),
    );
    assert_eq!(
        a.authenticate_token(&t).await.unwrap_err(),
        r#"oidc: parse username claims "sub": claim not present"#
    );
}

#[tokio::test]
async fn email_must_be_verified() {
    let mut m = default_mappings();
    m.username = prefixed("email", "");
    let (a, k) = ready(jwt(m), &[]).await;
    let t = token(
        &k,
        "k1",
        claims(json!({"email": "jane@example.com", "email_verified": false})),
    );
    assert_eq!(
        a.authenticate_token(&t).await.unwrap_err(),
        "oidc: email not verified"
    );
    let t = token(
        &k,
        "k1",
        claims(json!({"email": "jane@example.com", "email_verified": "yes"})),
    );
    assert_eq!(
        a.authenticate_token(&t).await.unwrap_err(),
        "oidc: parse 'email_verified' claim: json: cannot unmarshal string into Go value of type bool"
    );
    let t = token(&k, "k1", claims(json!({"email": "jane@example.com"})));
    assert_eq!(
        a.authenticate_token(&t).await.unwrap().unwrap().name,
        "jane@example.com"
    );
}

#[tokio::test]
async fn maps_claims_with_cel() {
    let expr = |e: &str| PrefixedClaimOrExpression {
        expression: e.to_owned(),
        ..PrefixedClaimOrExpression::default()
    };
    let mut config = jwt(ClaimMappings {
        username: expr("'cel:' + claims.sub"),
        groups: expr("claims.roles.map(r, 'role:' + r)"),
        uid: ClaimOrExpression {
            claim: String::new(),
            expression: "claims.sub + '-uid'".to_owned(),
        },
        extra: vec![ExtraMapping {
            key: "example.org/tenant".to_owned(),
            value_expression: "claims.tenant".to_owned(),
        }],
    });
    config.claim_validation_rules = vec![
        ClaimValidationRule {
            claim: "hd".to_owned(),
            required_value: "example.com".to_owned(),
            ..ClaimValidationRule::default()
        },
        ClaimValidationRule {
            expression: "claims.tenant != 'blocked'".to_owned(),
            message: "tenant is blocked".to_owned(),
            ..ClaimValidationRule::default()
        },
    ];
    config.user_validation_rules = vec![UserValidationRule {
        expression: "!user.username.startsWith('cel:system:')".to_owned(),
        message: "username cannot use reserved system: prefix".to_owned(),
    }];
    let (a, k) = ready(config, &[]).await;
    let good = json!({"roles": ["admin", ""], "tenant": "t1", "hd": "example.com"});
    let user = a
        .authenticate_token(&token(&k, "k1", claims(good)))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.name, "cel:jane");
    assert_eq!(user.groups, vec!["role:admin", "role:"]);
    assert_eq!(user.uid, "jane-uid");
    assert_eq!(
        user.extra.get("example.org/tenant"),
        Some(&vec!["t1".to_owned()])
    );

    let cases = [
        (
            json!({"roles": [], "tenant": "t1"}),
            "oidc: required claim hd not present in ID token",
        ),
        (
            json!({"roles": [], "tenant": "t1", "hd": "other.com"}),
            "oidc: required claim hd value does not match. Got = other.com, want = example.com",
        ),
        (
            json!({"roles": [], "tenant": "blocked", "hd": "example.com"}),
            "oidc: error evaluating claim validation expression: validation expression 'claims.tenant != 'blocked'' failed: tenant is blocked",
        ),
        (
            json!({"roles": [], "tenant": "t1", "hd": "example.com", "sub": "system:x"}),
            "oidc: error evaluating user info validation rule: validation expression '!user.username.startsWith('cel:system:')' failed: username cannot use reserved system: prefix",
        ),
        (
            json!({"roles": [1], "tenant": "t1", "hd": "example.com"}),
            "oidc: error evaluating group claim expression: expression 'claims.roles.map(r, 'role:' + r)' resulted in error: no such overload",
        ),
        (
            json!({"roles": [], "hd": "example.com"}),
            "expression 'claims.tenant' resulted in error: no such key: tenant",
        ),
    ];
    for (extra, want) in cases {
        let err = a
            .authenticate_token(&token(&k, "k1", claims(extra)))
            .await
            .unwrap_err();
        assert!(err.starts_with(want), "{err}\nwant {want}");
    }
}

#[tokio::test]
async fn verification_errors() {
    let (a, k) = ready(jwt(default_mappings()), &[]).await;
    let cases = [
        (
            claims(json!({"exp": NOW - 1})),
            "oidc: verify token: oidc: token is expired (Token Expiry: 2009-11-10 22:59:59 +0000 UTC)",
        ),
        (
            claims(json!({"nbf": NOW + 120})),
            "oidc: verify token: oidc: current time 2009-11-10 23:00:00 +0000 UTC before the nbf (not before) time: 2009-11-10 23:02:00 +0000 UTC",
        ),
        (
            claims(json!({"aud": ["other"]})),
            r#"oidc: verify token: oidc: expected audience "my-client" got ["other"]"#,
        ),
    ];
    for (c, want) in cases {
        assert_eq!(
            a.authenticate_token(&token(&k, "k1", c)).await.unwrap_err(),
            want
        );
    }
    // Within the minute of leeway.
    let t = token(&k, "k1", claims(json!({"nbf": NOW + 30})));
    assert!(a.authenticate_token(&t).await.unwrap().is_some());
    // Another issuer's token is no opinion; one that is not a JWT too.
    let t = token(
        &k,
        "k1",
        claims(json!({"iss": "https://other.example.com"})),
    );
    assert_eq!(a.authenticate_token(&t).await.unwrap(), None);
    assert_eq!(a.authenticate_token("not-a-jwt").await.unwrap(), None);
    // The algorithm must be allowed.
    let ec = key(EC);
    let t = token(&ec, "k1", claims(json!({})));
    assert_eq!(
        a.authenticate_token(&t).await.unwrap_err(),
        r#"oidc: verify token: oidc: id token signed with unsupported algorithm, expected ["RS256"] got "ES256""#
    );
    // Multiple audiences: any of them, upstream's message otherwise.
    let mut multi = jwt(default_mappings());
    multi.issuer.audiences = vec!["b".to_owned(), "a".to_owned()];
    multi.issuer.audience_match_policy = "MatchAny".to_owned();
    let (a, k) = ready(multi, &[]).await;
    assert!(
        a.authenticate_token(&token(&k, "k1", claims(json!({"aud": ["x", "a"]}))))
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        a.authenticate_token(&token(&k, "k1", claims(json!({"aud": "c"}))))
            .await
            .unwrap_err(),
        r#"oidc: verify token: oidc: expected audience in ["a" "b"] got ["c"]"#
    );
}

#[tokio::test]
async fn rotates_keys_on_unknown_kid() {
    let provider = FakeProvider::new(vec![(key(RSA), "k1".to_owned())]);
    let (a, now) = authenticator(
        jwt(default_mappings()),
        provider.clone(),
        &["RS256", "ES256"],
    );
    a.initialize().await.unwrap();
    let rsa = key(RSA);
    let ec = key(EC);
    assert!(
        a.authenticate_token(&token(&rsa, "k1", claims(json!({}))))
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(provider.key_fetches.load(Ordering::SeqCst), 1);
    // Cached: no new fetch.
    assert!(
        a.authenticate_token(&token(&rsa, "k1", claims(json!({}))))
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(provider.key_fetches.load(Ordering::SeqCst), 1);
    // An unknown key: fetched again, still unknown.
    let t = token(&ec, "k2", claims(json!({})));
    assert_eq!(
        a.authenticate_token(&t).await.unwrap_err(),
        "oidc: verify token: failed to verify signature: failed to verify id token signature"
    );
    assert_eq!(provider.key_fetches.load(Ordering::SeqCst), 2);
    // The provider rotates: the next token with the new key refetches and verifies.
    provider
        .keys
        .lock()
        .unwrap()
        .push((key(EC), "k2".to_owned()));
    *provider.cache_control.lock().unwrap() = "public, max-age=3600".to_owned();
    assert!(a.authenticate_token(&t).await.unwrap().is_some());
    assert_eq!(provider.key_fetches.load(Ordering::SeqCst), 3);
    // Fresh keys (max-age) are not refetched for an unknown key.
    let t3 = token(&rsa, "k3", claims(json!({})));
    assert!(a.authenticate_token(&t3).await.is_err());
    assert_eq!(provider.key_fetches.load(Ordering::SeqCst), 3);
    // Once within 30 s of expiring, they are.
    *now.lock().unwrap() += Duration::from_secs(3600 - 29);
    let t3 = token(&rsa, "k3", claims(json!({"exp": NOW + 7200})));
    assert!(a.authenticate_token(&t3).await.is_err());
    assert_eq!(provider.key_fetches.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn uninitialized_until_the_provider_answers() {
    let provider = FakeProvider::new(vec![(key(RSA), "k1".to_owned())]);
    provider.discovery_status.store(500, Ordering::SeqCst);
    let (a, _) = authenticator(jwt(default_mappings()), provider.clone(), &[]);
    assert_eq!(
        a.health_check().unwrap_err(),
        r#"oidc: authenticator for issuer "https://auth.example.com" is not initialized"#
    );
    let t = token(&key(RSA), "k1", claims(json!({})));
    assert_eq!(
        a.authenticate_token(&t).await.unwrap_err(),
        "oidc: authenticator not initialized"
    );
    let err = a.initialize().await.unwrap_err();
    assert!(err.starts_with("500 Internal Server Error: {"), "{err}");
    assert_eq!(
        a.health_check().unwrap_err(),
        format!(
            r#"oidc: authenticator for issuer "https://auth.example.com" is not healthy: {err}"#
        )
    );
    provider.discovery_status.store(200, Ordering::SeqCst);
    a.initialize().await.unwrap();
    assert!(a.health_check().is_ok());
    assert!(a.authenticate_token(&t).await.unwrap().is_some());
}

#[tokio::test]
async fn discovery_issuer_must_match() {
    let provider = Arc::new(FakeProvider {
        issuer: "https://elsewhere".to_owned(),
        ..Arc::try_unwrap(FakeProvider::new(Vec::new())).ok().unwrap()
    });
    let (a, _) = authenticator(jwt(default_mappings()), provider, &[]);
    assert_eq!(
        a.initialize().await.unwrap_err(),
        r#"oidc: issuer did not match the issuer returned by provider, expected "https://auth.example.com" got "https://elsewhere""#
    );
}

#[test]
fn rejects_unknown_signing_algorithms() {
    let err = OidcAuthenticator::new(OidcOptions {
        jwt: jwt(default_mappings()),
        supported_signing_algs: vec!["HS256".to_owned()],
        disallowed_issuers: Vec::new(),
        client: FakeProvider::new(Vec::new()),
        now: system_clock(),
    })
    .unwrap_err();
    assert_eq!(err, r#"oidc: unsupported signing alg: "HS256""#);
}

#[test]
fn parses_jwks() {
    let rsa = key(RSA).public_key().unwrap();
    let ec = key(EC).public_key().unwrap();
    let keys = keyset::parse_jwks(keyset_json(&[rsa.clone(), ec.clone()]).as_bytes()).unwrap();
    assert_eq!(keys[0].spki, rsa.spki);
    assert_eq!(keys[1].spki, ec.spki);
    assert_eq!(
        keyset::parse_jwks(br#"{"keys":[{"kty":"oct","k":"AA"}]}"#).unwrap_err(),
        "square/go-jose: unknown json web key type 'oct'"
    );
}

#[tokio::test]
async fn expands_distributed_groups() {
    let provider = FakeProvider::new(vec![(key(RSA), "k1".to_owned())]);
    let (a, _) = authenticator(jwt(default_mappings()), provider.clone(), &[]);
    a.initialize().await.unwrap();
    let k = key(RSA);
    *provider.distributed.lock().unwrap() =
        token(&k, "k1", claims(json!({"groups": ["dist-a", "dist-b"]})));
    let sources = |token: &str| {
        json!({
            "_claim_names": {"groups": "src1"},
            "_claim_sources": {"src1": {"endpoint": format!("{ISSUER}/groups"), "access_token": token}},
        })
    };
    let t = token(&k, "k1", claims(sources("t")));
    // The verifier of the claims' issuer is discovered in the background on first use.
    assert_eq!(
        a.authenticate_token(&t).await.unwrap_err(),
        r#"oidc: could not expand distributed claims: verifying untrusted issuer https://auth.example.com failed: verifier not initialized for issuer: "https://auth.example.com""#
    );
    let mut user = None;
    for _ in 0..100 {
        if let Ok(u) = a.authenticate_token(&t).await {
            user = u;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(user.unwrap().groups, vec!["dist-a", "dist-b"]);
    let t = token(&k, "k1", claims(sources("wrong")));
    assert_eq!(
        a.authenticate_token(&t).await.unwrap_err(),
        r#"oidc: could not expand distributed claims: while getting distributed claim "groups": error while getting distributed claim JWT: 401 Unauthorized"#
    );
    // The token's own groups win.
    let mut own = sources("t");
    own["groups"] = json!(["own"]);
    let t = token(&k, "k1", claims(own));
    assert_eq!(
        a.authenticate_token(&t).await.unwrap().unwrap().groups,
        vec!["own"]
    );
    // A name whose source is missing fails verification, as go-oidc.
    let t = token(
        &k,
        "k1",
        claims(json!({"_claim_names": {"groups": "src2"}, "_claim_sources": {}})),
    );
    assert_eq!(
        a.authenticate_token(&t).await.unwrap_err(),
        "oidc: verify token: oidc: source does not exist"
    );
}
