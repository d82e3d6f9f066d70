use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::signature::{self, EcdsaKeyPair};
use base64::Engine as _;
use futures_util::future::BoxFuture;
use serde_json::json;

use super::claims::{DEFAULT_LEEWAY, ERR_INVALIDATED};
use super::keys::{
    Curve, KeyMaterial, NO_PRIVATE_KEY, NO_PUBLIC_KEYS, parse_private_key_pem,
    parse_public_keys_pem,
};
use super::*;
use crate::authentication::Authenticator;
use crate::authentication::testing::request;

const RSA_PKCS1: &str = include_str!("testdata/rsa-pkcs1.pem");
const EC_P256_SEC1: &str = include_str!("testdata/ec-p256-sec1.pem");
const EC_P384_PKCS8: &str = include_str!("testdata/ec-p384-pkcs8.pem");

/// The public key of upstream's key-ID stability test, and the ID it must keep.
const UPSTREAM_RSA_PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA249XwEo9k4tM8fMxV7zx
OhcrP+WvXn917koM5Qr2ZXs4vo26e4ytdlrV0bQ9SlcLpQVSYjIxNfhTZdDt+ecI
zshKuv1gKIxbbLQMOuK1eA/4HALyEkFgmS/tleLJrhc65tKPMGD+pKQ/xhmzRuCG
51RoiMgbQxaCyYxGfNLpLAZK9L0Tctv9a0mJmGIYnIOQM4kC1A1I1n3EsXMWmeJU
j7OTh/AjjCnMnkgvKT2tpKxYQ59PgDgU8Ssc7RDSmSkLxnrv+OrN80j6xrw0OjEi
B4Ycr0PqfzZcvy8efTtFQ/Jnc4Bp1zUtFXt7+QeevePtQ2EcyELXE0i63T1CujRM
WwIDAQAB
-----END PUBLIC KEY-----
";

fn pem(label: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = b64
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
}

fn p521_pkcs8() -> String {
    let kp = EcdsaKeyPair::generate(&signature::ECDSA_P521_SHA512_FIXED_SIGNING).unwrap();
    pem("PRIVATE KEY", kp.to_pkcs8v1().unwrap().as_ref())
}

fn rsa_pkcs8() -> String {
    let kp = signature::RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).unwrap();
    let der: aws_lc_rs::encoding::Pkcs8V1Der = kp.as_der().unwrap();
    pem("PRIVATE KEY", der.as_ref())
}

#[test]
fn key_id_is_upstreams() {
    let keys = parse_public_keys_pem(UPSTREAM_RSA_PUBLIC_KEY.as_bytes()).unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(
        keys[0].key_id,
        "JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU"
    );
    let KeyMaterial::Rsa { n, e } = &keys[0].material else {
        panic!("not RSA")
    };
    assert_eq!((n.len(), e.as_slice()), (256, &[1u8, 0, 1][..]));
}

#[test]
fn private_keys_of_every_encoding() {
    let rsa = parse_private_key_pem(RSA_PKCS1.as_bytes()).unwrap();
    assert!(matches!(rsa, PrivateKey::Rsa(_)));
    // The EC PARAMETERS block before the key is skipped.
    let ec = parse_private_key_pem(EC_P256_SEC1.as_bytes()).unwrap();
    assert!(matches!(ec, PrivateKey::Ec(_, Curve::P256)));
    let ec = parse_private_key_pem(EC_P384_PKCS8.as_bytes()).unwrap();
    assert!(matches!(ec, PrivateKey::Ec(_, Curve::P384)));
    let ec = parse_private_key_pem(p521_pkcs8().as_bytes()).unwrap();
    assert!(matches!(ec, PrivateKey::Ec(_, Curve::P521)));
    let rsa = parse_private_key_pem(rsa_pkcs8().as_bytes()).unwrap();
    assert!(matches!(rsa, PrivateKey::Rsa(_)));
    // Block types are checked: a PKCS#1 key under another label is not taken.
    let relabeled = RSA_PKCS1.replace("RSA PRIVATE KEY", "EC PRIVATE KEY");
    assert_eq!(
        parse_private_key_pem(relabeled.as_bytes()).unwrap_err(),
        NO_PRIVATE_KEY
    );
    assert_eq!(
        parse_private_key_pem(UPSTREAM_RSA_PUBLIC_KEY.as_bytes()).unwrap_err(),
        "data does not contain a valid RSA or ECDSA private key"
    );
}

#[test]
fn public_keys_from_private_keys_certificates_and_pkix() {
    let cert = rcgen::generate_simple_self_signed(vec!["a".into()]).unwrap();
    let file = format!(
        "{RSA_PKCS1}{EC_P256_SEC1}{UPSTREAM_RSA_PUBLIC_KEY}{}",
        cert.cert.pem()
    );
    let keys = parse_public_keys_pem(file.as_bytes()).unwrap();
    assert_eq!(keys.len(), 4);
    let rsa = parse_private_key_pem(RSA_PKCS1.as_bytes()).unwrap();
    assert_eq!(keys[0], rsa.public_key().unwrap());
    let ec = parse_private_key_pem(EC_P256_SEC1.as_bytes()).unwrap();
    assert_eq!(keys[1], ec.public_key().unwrap());
    assert_eq!(
        keys[2].key_id,
        "JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU"
    );
    let signer = parse_private_key_pem(cert.signing_key.serialize_pem().as_bytes()).unwrap();
    assert_eq!(keys[3], signer.public_key().unwrap());
    // As upstream's keyutil, an ECDSA private key in PKCS#8 gives no public key.
    assert_eq!(
        parse_public_keys_pem(EC_P384_PKCS8.as_bytes()).unwrap_err(),
        NO_PUBLIC_KEYS
    );
    assert_eq!(
        parse_public_keys_pem(b"not pem").unwrap_err(),
        "data does not contain any valid RSA or ECDSA public keys"
    );
}

#[test]
fn key_file_errors_are_upstreams() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.pem");
    std::fs::write(&bad, "junk").unwrap();
    let err = public_keys_from_file(&bad).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "error reading public key file {}: data does not contain any valid RSA or ECDSA public keys",
            bad.display()
        )
    );
    let err = TokenGenerator::from_file("iss", &bad)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "failed to parse service-account-issuer-key-file: error reading private key file {}: data does not contain a valid RSA or ECDSA private key",
            bad.display()
        )
    );
    let missing = dir.path().join("missing.pem");
    let err = private_key_from_file(&missing).unwrap_err().to_string();
    assert_eq!(
        err,
        format!("open {}: no such file or directory", missing.display())
    );
}

#[test]
fn usernames_split_and_join_as_upstream() {
    assert_eq!(make_username("ns", "sa"), "system:serviceaccount:ns:sa");
    assert_eq!(
        split_username("system:serviceaccount:ns:sa").unwrap(),
        ("ns".to_owned(), "sa".to_owned())
    );
    for bad in [
        "system:serviceaccount:ns",
        "system:serviceaccount:ns:sa:x",
        "system:serviceaccount:NS:sa",
        "user",
    ] {
        assert_eq!(
            split_username(bad).unwrap_err(),
            "Username must be in the form system:serviceaccount:namespace:name"
        );
    }
}

/// Objects by (kind, namespace, name).
#[derive(Default)]
struct Fake {
    objects: Mutex<HashMap<(String, String, String), LookupObject>>,
}

impl Fake {
    fn put(&self, kind: &str, ns: &str, name: &str, obj: LookupObject) {
        let key = (kind.to_owned(), ns.to_owned(), name.to_owned());
        self.objects.lock().unwrap().insert(key, obj);
    }
    fn get(&self, kind: &str, ns: &str, name: &str) -> LookupResult {
        let key = (kind.to_owned(), ns.to_owned(), name.to_owned());
        Ok(self.objects.lock().unwrap().get(&key).cloned())
    }
}

impl ServiceAccountLookup for Fake {
    fn service_account<'a>(&'a self, ns: &'a str, name: &'a str) -> BoxFuture<'a, LookupResult> {
        Box::pin(std::future::ready(self.get("sa", ns, name)))
    }
    fn pod<'a>(&'a self, ns: &'a str, name: &'a str) -> BoxFuture<'a, LookupResult> {
        Box::pin(std::future::ready(self.get("pod", ns, name)))
    }
    fn secret<'a>(&'a self, ns: &'a str, name: &'a str) -> BoxFuture<'a, LookupResult> {
        Box::pin(std::future::ready(self.get("secret", ns, name)))
    }
    fn node<'a>(&'a self, name: &'a str) -> BoxFuture<'a, LookupResult> {
        Box::pin(std::future::ready(self.get("node", "", name)))
    }
}

fn obj(uid: &str) -> LookupObject {
    LookupObject {
        uid: uid.to_owned(),
        ..Default::default()
    }
}

const ISS: &str = "https://kubernetes.default.svc";

fn sa_ref() -> ObjectRef {
    ObjectRef {
        name: "build".into(),
        uid: "sa-uid".into(),
    }
}

struct Setup {
    generator: TokenGenerator,
    fake: Arc<Fake>,
    auth: JwtTokenAuthenticator,
}

fn setup(key_pem: &str) -> Setup {
    let key = parse_private_key_pem(key_pem.as_bytes()).unwrap();
    let generator = TokenGenerator::new(ISS, key).unwrap();
    let fake = Arc::new(Fake::default());
    fake.put("sa", "ns", "build", obj("sa-uid"));
    let auth = JwtTokenAuthenticator::new(
        vec![ISS.into(), "https://old".into()],
        vec![generator.public_key().clone()],
        vec![ISS.into()],
        fake.clone(),
    );
    Setup {
        generator,
        fake,
        auth,
    }
}

fn token(s: &Setup, bound: Option<&BoundObject>, auds: &[&str]) -> (String, TokenClaims) {
    let auds: Vec<String> = auds.iter().map(|a| (*a).to_owned()).collect();
    let c = claims("ns", &sa_ref(), bound, 3600, 0, &auds, SystemTime::now());
    (s.generator.generate_token(&c).unwrap(), c)
}

async fn authenticate(s: &Setup, token: &str) -> crate::Result<Option<UserInfo>> {
    Ok(s.auth
        .authenticate_token(token, None)
        .await?
        .map(|r| r.user))
}

async fn error_of(s: &Setup, token: &str) -> String {
    authenticate(s, token).await.unwrap_err().to_string()
}

#[tokio::test]
async fn round_trip_with_every_key_type() {
    let keys = [
        RSA_PKCS1.to_owned(),
        EC_P256_SEC1.to_owned(),
        EC_P384_PKCS8.to_owned(),
        p521_pkcs8(),
    ];
    for (key, alg) in keys.iter().zip(["RS256", "ES256", "ES384", "ES512"]) {
        let s = setup(key);
        let (tok, c) = token(&s, None, &[ISS]);
        let jws = jwt::parse(&tok).unwrap();
        assert_eq!(jws.alg, alg);
        assert_eq!(jws.kid, s.generator.public_key().key_id);
        let user = authenticate(&s, &tok).await.unwrap().unwrap();
        assert_eq!(user.name, "system:serviceaccount:ns:build");
        assert_eq!(user.uid, "sa-uid");
        assert_eq!(
            user.groups,
            vec!["system:serviceaccounts", "system:serviceaccounts:ns"]
        );
        assert_eq!(
            user.extra,
            [(
                "authentication.kubernetes.io/credential-id".to_owned(),
                vec![format!("JTI={}", c.id)]
            )]
            .into()
        );
    }
}

#[tokio::test]
async fn payload_is_upstreams() {
    let s = setup(EC_P256_SEC1);
    let pod = BoundObject::Pod {
        pod: ObjectRef {
            name: "p".into(),
            uid: "pod-uid".into(),
        },
        node: Some(ObjectRef {
            name: "n".into(),
            uid: "node-uid".into(),
        }),
    };
    let (tok, c) = token(&s, Some(&pod), &["a", "b"]);
    let jws = jwt::parse(&tok).unwrap();
    let payload: serde_json::Value = serde_json::from_slice(&jws.payload).unwrap();
    assert_eq!(
        payload,
        json!({
            "aud": ["a", "b"], "exp": c.expiry, "iat": c.issued_at, "iss": ISS, "jti": c.id,
            "kubernetes.io": {
                "namespace": "ns",
                "node": {"name": "n", "uid": "node-uid"},
                "pod": {"name": "p", "uid": "pod-uid"},
                "serviceaccount": {"name": "build", "uid": "sa-uid"}
            },
            "nbf": c.not_before, "sub": "system:serviceaccount:ns:build"
        })
    );
    assert_eq!(c.expiry - c.issued_at, 3600);
    // Keys sorted, as go-jose writes them.
    let text = String::from_utf8(jws.payload.clone()).unwrap();
    assert!(
        text.starts_with("{\"aud\":[\"a\",\"b\"],\"exp\":"),
        "{text}"
    );
}

#[tokio::test]
async fn bound_pod_and_node_reach_the_user() {
    let s = setup(RSA_PKCS1);
    s.fake.put("pod", "ns", "p", obj("pod-uid"));
    let pod = BoundObject::Pod {
        pod: ObjectRef {
            name: "p".into(),
            uid: "pod-uid".into(),
        },
        node: Some(ObjectRef {
            name: "n".into(),
            uid: "node-uid".into(),
        }),
    };
    let (tok, _) = token(&s, Some(&pod), &[]);
    let user = authenticate(&s, &tok).await.unwrap().unwrap();
    let extra = |k: &str| user.extra.get(k).cloned().unwrap_or_default();
    assert_eq!(extra(POD_NAME_KEY), vec!["p"]);
    assert_eq!(extra(POD_UID_KEY), vec!["pod-uid"]);
    assert_eq!(extra(NODE_NAME_KEY), vec!["n"]);
    assert_eq!(extra(NODE_UID_KEY), vec!["node-uid"]);

    s.fake.put("pod", "ns", "p", obj("other"));
    assert_eq!(
        error_of(&s, &tok).await,
        "pod UID (other) does not match service account pod ref claim (pod-uid)"
    );
    let mut deleted = obj("pod-uid");
    deleted.deletion_timestamp = Some(SystemTime::now() - DEFAULT_LEEWAY * 2);
    s.fake.put("pod", "ns", "p", deleted);
    assert_eq!(error_of(&s, &tok).await, ERR_INVALIDATED);
    // Deleted within the leeway: still valid.
    let mut deleting = obj("pod-uid");
    deleting.deletion_timestamp = Some(SystemTime::now());
    s.fake.put("pod", "ns", "p", deleting);
    assert!(authenticate(&s, &tok).await.unwrap().is_some());
    s.fake.objects.lock().unwrap().clear();
    s.fake.put("sa", "ns", "build", obj("sa-uid"));
    assert_eq!(
        error_of(&s, &tok).await,
        "service account token has been invalidated"
    );
}

#[tokio::test]
async fn node_and_secret_bindings_are_checked() {
    let s = setup(EC_P256_SEC1);
    let node = BoundObject::Node(ObjectRef {
        name: "n".into(),
        uid: "node-uid".into(),
    });
    let (tok, _) = token(&s, Some(&node), &[]);
    assert_eq!(error_of(&s, &tok).await, ERR_INVALIDATED);
    s.fake.put("node", "", "n", obj("x"));
    assert_eq!(
        error_of(&s, &tok).await,
        "node UID (x) does not match service account node ref claim (node-uid)"
    );
    s.fake.put("node", "", "n", obj("node-uid"));
    let user = authenticate(&s, &tok).await.unwrap().unwrap();
    assert_eq!(user.extra[NODE_NAME_KEY], vec!["n"]);
    assert!(!user.extra.contains_key(POD_NAME_KEY));

    let secret = BoundObject::Secret(ObjectRef {
        name: "s".into(),
        uid: "s-uid".into(),
    });
    let (tok, _) = token(&s, Some(&secret), &[]);
    assert_eq!(error_of(&s, &tok).await, ERR_INVALIDATED);
    s.fake.put("secret", "ns", "s", obj("y"));
    assert_eq!(
        error_of(&s, &tok).await,
        "secret UID (y) does not match service account secret ref claim (s-uid)"
    );
}

#[tokio::test]
async fn service_account_checks() {
    let s = setup(EC_P256_SEC1);
    let (tok, _) = token(&s, None, &[]);
    s.fake.put("sa", "ns", "build", obj("new-uid"));
    assert_eq!(
        error_of(&s, &tok).await,
        "service account UID (new-uid) does not match claim (sa-uid)"
    );
    let mut deleted = obj("sa-uid");
    deleted.deletion_timestamp = Some(SystemTime::now() - Duration::from_secs(120));
    s.fake.put("sa", "ns", "build", deleted);
    assert_eq!(
        error_of(&s, &tok).await,
        "service account ns/build has been deleted"
    );
    s.fake.objects.lock().unwrap().clear();
    assert_eq!(
        error_of(&s, &tok).await,
        "serviceaccounts \"build\" not found"
    );
}

/// A token signed by the setup's key with `payload` as its claims.
fn signed(s: &Setup, key_pem: &str, payload: serde_json::Value) -> String {
    let key = parse_private_key_pem(key_pem.as_bytes()).unwrap();
    let bytes = serde_json::to_vec(&payload).unwrap();
    jwt::sign(&key, &s.generator.public_key().key_id, &bytes).unwrap()
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn claims_at(iat: i64, nbf: i64, exp: i64) -> serde_json::Value {
    json!({
        "iss": ISS, "aud": ISS, "sub": "system:serviceaccount:ns:build",
        "iat": iat, "nbf": nbf, "exp": exp,
        "kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "build", "uid": "sa-uid"}}
    })
}

#[tokio::test]
async fn time_claims_with_upstreams_leeway() {
    let s = setup(EC_P256_SEC1);
    let now = now_secs();
    let cases = [
        (
            claims_at(now - 7200, now - 7200, now - 120),
            "service account token has expired",
        ),
        (
            claims_at(now, now + 120, now + 3600),
            "service account token is not valid yet",
        ),
        (
            claims_at(now + 120, now, now + 3600),
            "service account token is issued in the future",
        ),
    ];
    for (payload, want) in cases {
        assert_eq!(error_of(&s, &signed(&s, EC_P256_SEC1, payload)).await, want);
    }
    // Within the minute of leeway.
    let ok = claims_at(now + 30, now + 30, now - 30);
    let user = authenticate(&s, &signed(&s, EC_P256_SEC1, ok))
        .await
        .unwrap();
    assert!(user.is_some());
    // No jti: no credential ID.
    assert!(user.unwrap().extra.is_empty());
}

#[tokio::test]
async fn signature_issuer_and_audiences() {
    let s = setup(EC_P256_SEC1);
    let now = now_secs();
    // Signed by another curve's key under our kid: ES384 is checked with our P-256 key.
    let forged = signed(&s, EC_P384_PKCS8, claims_at(now, now, now + 60));
    assert_eq!(
        error_of(&s, &forged).await,
        "go-jose/go-jose: error in cryptographic primitive"
    );
    // A signature of the wrong size for its algorithm.
    let (_, rest) = forged.split_once('.').unwrap();
    let header =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"alg":"ES256","kid":"k"}"#);
    let resized = format!("{header}.{rest}");
    let mut s2 = setup(EC_P256_SEC1);
    s2.auth = JwtTokenAuthenticator::new(
        vec![ISS.into()],
        vec![PublicKey {
            key_id: "k".into(),
            ..s.generator.public_key().clone()
        }],
        vec![ISS.into()],
        s.fake.clone(),
    );
    assert_eq!(
        error_of(&s2, &resized).await,
        "go-jose/go-jose: invalid signature size, have 96 bytes, wanted 64"
    );
    let other = parse_private_key_pem(RSA_PKCS1.as_bytes()).unwrap();
    let bytes = serde_json::to_vec(&claims_at(now, now, now + 60)).unwrap();
    let unknown_kid = jwt::sign(&other, "nope", &bytes).unwrap();
    assert_eq!(
        error_of(&s, &unknown_kid).await,
        "invalid signature, no keys found"
    );
    let bad_sig = jwt::sign(&other, &s.generator.public_key().key_id, &bytes).unwrap();
    assert_eq!(
        error_of(&s, &bad_sig).await,
        "go-jose/go-jose: unknown/unsupported algorithm"
    );
    let good = signed(&s, EC_P256_SEC1, claims_at(now, now, now + 60));
    // One character of the signature changed (the middle one: no trailing bits).
    let at = good.rfind('.').unwrap() + 20;
    let c = if &good[at..=at] == "A" { "B" } else { "A" };
    let tampered = format!("{}{c}{}", &good[..at], &good[at + 1..]);
    assert_eq!(
        error_of(&s, &tampered).await,
        "go-jose/go-jose: error in cryptographic primitive"
    );
    // Another issuer, or not a JWT: no opinion.
    let mut foreign = claims_at(now, now, now + 60);
    foreign["iss"] = json!("https://elsewhere");
    assert!(
        authenticate(&s, &signed(&s, EC_P256_SEC1, foreign))
            .await
            .unwrap()
            .is_none()
    );
    assert!(authenticate(&s, "abc").await.unwrap().is_none());
    // An accepted issuer that does not sign.
    let mut old = claims_at(now, now, now + 60);
    old["iss"] = json!("https://old");
    assert!(
        authenticate(&s, &signed(&s, EC_P256_SEC1, old))
            .await
            .unwrap()
            .is_some()
    );
    let (tok, _) = token(&s, None, &["vault", "other"]);
    assert_eq!(
        error_of(&s, &tok).await,
        "token audiences [\"vault\" \"other\"] is invalid for the target audiences [\"https://kubernetes.default.svc\"]"
    );
    let requested = vec!["vault".to_owned()];
    let resp = s
        .auth
        .authenticate_token(&tok, Some(&requested))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(resp.audiences, vec!["vault"]);
}

#[tokio::test]
async fn bearer_header_is_consumed() {
    let s = setup(EC_P256_SEC1);
    let (tok, _) = token(&s, None, &[ISS]);
    let mut headers = http::HeaderMap::new();
    headers.insert(
        http::header::AUTHORIZATION,
        format!("Bearer {tok}").parse().unwrap(),
    );
    let req = request("/api", &headers, None);
    let resp = s.auth.authenticate(&req).await.unwrap().unwrap();
    assert_eq!(resp.user.name, "system:serviceaccount:ns:build");
    assert_eq!(resp.consumed_headers, vec![http::header::AUTHORIZATION]);
}

fn legacy_claims() -> serde_json::Value {
    json!({
        "iss": LEGACY_ISSUER, "sub": "system:serviceaccount:ns:build",
        "kubernetes.io/serviceaccount/namespace": "ns",
        "kubernetes.io/serviceaccount/secret.name": "build-token",
        "kubernetes.io/serviceaccount/service-account.name": "build",
        "kubernetes.io/serviceaccount/service-account.uid": "sa-uid"
    })
}

#[tokio::test]
async fn legacy_tokens_must_match_their_secret() {
    let s = setup(RSA_PKCS1);
    let tok = signed(&s, RSA_PKCS1, legacy_claims());
    assert_eq!(error_of(&s, &tok).await, "Token has been invalidated");
    let mut secret = obj("secret-uid");
    secret.token = Some(b"other".to_vec());
    s.fake.put("secret", "ns", "build-token", secret.clone());
    assert_eq!(
        error_of(&s, &tok).await,
        "Token does not match server's copy"
    );
    secret.token = Some(tok.clone().into_bytes());
    s.fake.put("secret", "ns", "build-token", secret.clone());
    let user = authenticate(&s, &tok).await.unwrap().unwrap();
    assert_eq!(user.name, "system:serviceaccount:ns:build");
    assert!(user.extra.is_empty());
    s.fake.put("sa", "ns", "build", obj("x"));
    assert_eq!(
        error_of(&s, &tok).await,
        "ServiceAccount UID (x) does not match claim (sa-uid)"
    );
    let mut missing = legacy_claims();
    missing
        .as_object_mut()
        .unwrap()
        .remove("kubernetes.io/serviceaccount/secret.name");
    assert_eq!(
        error_of(&s, &signed(&s, RSA_PKCS1, missing)).await,
        "secretName claim is missing"
    );
    let mut wrong = legacy_claims();
    wrong["sub"] = json!("system:serviceaccount:ns:other");
    assert_eq!(
        error_of(&s, &signed(&s, RSA_PKCS1, wrong)).await,
        "sub claim is invalid"
    );
}

#[tokio::test]
async fn without_lookup_legacy_tokens_stand_on_their_claims() {
    let mut s = setup(RSA_PKCS1);
    s.auth = s.auth.with_legacy_lookup(false);
    // No secret is stored: with lookup this is "Token has been invalidated".
    let tok = signed(&s, RSA_PKCS1, legacy_claims());
    let user = authenticate(&s, &tok).await.unwrap().unwrap();
    assert_eq!(user.name, "system:serviceaccount:ns:build");
    assert_eq!(user.uid, "sa-uid");
    let mut wrong = legacy_claims();
    wrong["sub"] = json!("system:serviceaccount:ns:other");
    assert_eq!(
        error_of(&s, &signed(&s, RSA_PKCS1, wrong)).await,
        "sub claim is invalid"
    );
}

#[test]
fn openid_documents_are_upstreams() {
    let rsa = parse_public_keys_pem(UPSTREAM_RSA_PUBLIC_KEY.as_bytes()).unwrap();
    let ec = parse_private_key_pem(EC_P256_SEC1.as_bytes())
        .unwrap()
        .public_key()
        .unwrap();
    let keys = vec![ec.clone(), rsa[0].clone()];
    let md = OpenIdMetadata::new(ISS, "", "api.example:6443", &keys).unwrap();
    assert_eq!(
        String::from_utf8(md.config_json).unwrap(),
        "{\"issuer\":\"https://kubernetes.default.svc\",\"jwks_uri\":\"https://api.example:6443/openid/v1/jwks\",\"response_types_supported\":[\"id_token\"],\"subject_types_supported\":[\"public\"],\"id_token_signing_alg_values_supported\":[\"ES256\",\"RS256\"]}"
    );
    let jwks: serde_json::Value = serde_json::from_slice(&md.keyset_json).unwrap();
    let rsa_jwk = &jwks["keys"][1];
    assert_eq!(
        rsa_jwk["kid"],
        "JHJehTTTZlsspKHT-GaJxK7Kd1NQgZJu3fyK6K_QDYU"
    );
    assert_eq!(rsa_jwk["e"], "AQAB");
    assert!(
        rsa_jwk["n"]
            .as_str()
            .unwrap()
            .starts_with("249XwEo9k4tM8fMxV7zx")
    );
    let text = String::from_utf8(md.keyset_json.clone()).unwrap();
    assert!(
        text.starts_with(&format!(
            "{{\"keys\":[{{\"use\":\"sig\",\"kty\":\"EC\",\"kid\":\"{}\",\"crv\":\"P-256\",\"alg\":\"ES256\",\"x\":",
            ec.key_id
        )),
        "{text}"
    );
    let ec_jwk = &jwks["keys"][0];
    assert_eq!(ec_jwk["x"].as_str().unwrap().len(), 43);
    assert!(text.contains(",\"alg\":\"RS256\",\"n\":"), "{text}");

    let err = |iss: &str, jwks: &str| OpenIdMetadata::new(iss, jwks, "h", &keys).unwrap_err();
    assert_eq!(
        err("http://a", ""),
        "issuer URL must use https scheme, got: http://a"
    );
    assert_eq!(
        err("https://a?x=1", ""),
        "issuer URL may not include a query, got: https://a?x=1"
    );
    assert_eq!(
        err("https://a#f", ""),
        "issuer URL may not include a fragment, got: https://a#f"
    );
    assert_eq!(
        err("https://a", "http://j"),
        "jwksURI requires https scheme, parsed as: http://j"
    );
    let md = OpenIdMetadata::new(ISS, "https://j/keys", "", &keys).unwrap();
    assert!(
        String::from_utf8(md.config_json)
            .unwrap()
            .contains("\"jwks_uri\":\"https://j/keys\"")
    );
}

mod notes;
