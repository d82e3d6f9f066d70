//! Tests of [`build`]: the order and the anonymous fallback of the assembled chain.

use std::io::Write;

use http::{HeaderMap, HeaderValue, header::AUTHORIZATION};

use super::testing::{Pki, request};
use super::*;

struct Files {
    _dir: tempfile::TempDir,
    client_ca: PathBuf,
    front_proxy_ca: PathBuf,
    tokens: PathBuf,
}

fn files(client: &Pki, front_proxy: &Pki) -> Files {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &str| {
        let path = dir.path().join(name);
        std::fs::File::create(&path)
            .unwrap()
            .write_all(body.as_bytes())
            .unwrap();
        path
    };
    Files {
        client_ca: write("client-ca.crt", &client.ca_pem),
        front_proxy_ca: write("front-proxy-ca.crt", &front_proxy.ca_pem),
        tokens: write("tokens.csv", "secret,tina,42,\"admins\"\n"),
        _dir: dir,
    }
}

fn config(f: &Files, anonymous: AnonymousConfig) -> AuthenticationConfig {
    let mut rh = RequestHeaderConfig::new(&f.front_proxy_ca);
    rh.allowed_names = vec!["front-proxy".into()];
    AuthenticationConfig {
        client_ca_file: Some(f.client_ca.clone()),
        token_auth_file: Some(f.tokens.clone()),
        request_header: Some(rh),
        anonymous,
        token_authenticators: Vec::new(),
    }
}

fn bearer(token: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(
        AUTHORIZATION,
        HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
    );
    h
}

async fn user_of(
    auth: &DynAuthenticator,
    path: &str,
    headers: &HeaderMap,
    peer: Option<&PeerCertificates>,
) -> Result<Option<UserInfo>> {
    let resp = auth.authenticate(&request(path, headers, peer)).await?;
    Ok(resp.map(|r| r.user))
}

#[tokio::test]
async fn every_method_authenticates_and_gets_authenticated_group() {
    let (client, proxy) = (Pki::new(), Pki::new());
    let f = files(&client, &proxy);
    let auth = build(&config(&f, AnonymousConfig::Enabled)).unwrap();

    let cert = client.client("carl", &["ops"]);
    let user = user_of(&auth, "/api", &HeaderMap::new(), Some(&cert))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (user.name.as_str(), user.groups),
        ("carl", vec!["ops".into(), "system:authenticated".into()])
    );

    let user = user_of(&auth, "/api", &bearer("secret"), None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (user.name.as_str(), user.groups),
        ("tina", vec!["admins".into(), "system:authenticated".into()])
    );

    let proxy_cert = proxy.client("front-proxy", &[]);
    let mut h = HeaderMap::new();
    h.insert("x-remote-user", HeaderValue::from_static("pat"));
    let user = user_of(&auth, "/api", &h, Some(&proxy_cert))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (user.name.as_str(), user.groups),
        ("pat", vec!["system:authenticated".into()])
    );
}

#[tokio::test]
async fn front_proxy_headers_are_ignored_on_a_client_ca_cert() {
    let (client, proxy) = (Pki::new(), Pki::new());
    let f = files(&client, &proxy);
    let auth = build(&config(&f, AnonymousConfig::Disabled)).unwrap();
    // The request-header authenticator fails verification, x509 then succeeds.
    let cert = client.client("carl", &[]);
    let mut h = HeaderMap::new();
    h.insert("x-remote-user", HeaderValue::from_static("admin"));
    let user = user_of(&auth, "/api", &h, Some(&cert))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.name, "carl");
}

#[tokio::test]
async fn bad_credentials_are_not_retried_as_anonymous() {
    let (client, proxy) = (Pki::new(), Pki::new());
    let f = files(&client, &proxy);
    let auth = build(&config(&f, AnonymousConfig::Enabled)).unwrap();
    let err = user_of(&auth, "/api", &bearer("wrong"), None)
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "invalid bearer token");

    let stranger = Pki::new().client("eve", &[]);
    let err = user_of(&auth, "/healthz", &HeaderMap::new(), Some(&stranger))
        .await
        .unwrap_err();
    // Both the front-proxy and the client-CA verifier refuse it.
    let msg = err.to_string();
    assert!(
        msg.starts_with("[x509: certificate signed by unknown authority, verifying certificate"),
        "{msg}"
    );
}

#[tokio::test]
async fn no_credentials_fall_back_to_anonymous_without_authenticated_group() {
    let (client, proxy) = (Pki::new(), Pki::new());
    let f = files(&client, &proxy);
    let auth = build(&config(&f, AnonymousConfig::Enabled)).unwrap();
    let user = user_of(&auth, "/api", &HeaderMap::new(), None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.name, "system:anonymous");
    assert_eq!(user.groups, vec!["system:unauthenticated".to_owned()]);
}

#[tokio::test]
async fn anonymous_paths_only_answer_those_paths() {
    let (client, proxy) = (Pki::new(), Pki::new());
    let f = files(&client, &proxy);
    let anonymous = AnonymousConfig::Paths(vec!["/healthz".into(), "/livez".into()]);
    let auth = build(&config(&f, anonymous)).unwrap();
    let h = HeaderMap::new();
    assert!(user_of(&auth, "/livez", &h, None).await.unwrap().is_some());
    assert!(user_of(&auth, "/api", &h, None).await.unwrap().is_none());
}

#[tokio::test]
async fn disabled_anonymous_is_no_opinion() {
    let (client, proxy) = (Pki::new(), Pki::new());
    let f = files(&client, &proxy);
    let auth = build(&config(&f, AnonymousConfig::Disabled)).unwrap();
    assert!(
        user_of(&auth, "/healthz", &HeaderMap::new(), None)
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn nothing_configured() {
    let h = HeaderMap::new();
    let none = build(&AuthenticationConfig::default()).unwrap();
    assert!(user_of(&none, "/", &h, None).await.unwrap().is_none());

    let cfg = AuthenticationConfig {
        anonymous: AnonymousConfig::Enabled,
        ..AuthenticationConfig::default()
    };
    let anon = build(&cfg).unwrap();
    let user = user_of(&anon, "/", &bearer("anything"), None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.name, "system:anonymous");
}

#[test]
fn unreadable_files_fail_the_build() {
    let cfg = AuthenticationConfig {
        token_auth_file: Some("/nonexistent/tokens.csv".into()),
        ..AuthenticationConfig::default()
    };
    assert!(build(&cfg).is_err());
}
