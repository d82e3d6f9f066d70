//! Front-proxy authentication, after upstream's `request/headerrequest`: a proxy holding a
//! client certificate from the request-header CA asserts the user in request headers.

use std::borrow::Cow;
use std::path::PathBuf;

use futures_util::future::BoxFuture;
use http::{HeaderMap, HeaderName, HeaderValue};

use super::x509::{CaVerifier, CertInfo};
use super::{AuthRequest, Authenticator, Response};
use crate::{Error, Result, UserInfo};

/// The `--requestheader-*` settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestHeaderConfig {
    /// CA bundle that must have signed the proxy's client certificate.
    pub client_ca_file: PathBuf,
    /// Common names the proxy's certificate may have; empty allows any.
    pub allowed_names: Vec<String>,
    pub username_headers: Vec<String>,
    pub uid_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_header_prefixes: Vec<String>,
}

impl RequestHeaderConfig {
    /// The flag defaults of kube-apiserver 1.33.
    pub fn new(client_ca_file: impl Into<PathBuf>) -> Self {
        RequestHeaderConfig {
            client_ca_file: client_ca_file.into(),
            allowed_names: Vec::new(),
            username_headers: vec!["X-Remote-User".to_owned()],
            uid_headers: Vec::new(),
            group_headers: vec!["X-Remote-Group".to_owned()],
            extra_header_prefixes: vec!["X-Remote-Extra-".to_owned()],
        }
    }

    /// Upstream's `RequestHeaderAuthenticationOptions.Validate` checks that are errors.
    pub fn validate(&self) -> Vec<String> {
        let mut errs = Vec::new();
        let lists = [
            ("requestheader-username-headers", &self.username_headers),
            ("requestheader-group-headers", &self.group_headers),
            (
                "requestheader-extra-headers-prefix",
                &self.extra_header_prefixes,
            ),
            ("requestheader-allowed-names", &self.allowed_names),
        ];
        for (flag, values) in lists {
            if values.iter().any(|v| v.trim().is_empty()) {
                errs.push(format!("empty value in {flag:?}"));
            }
        }
        let has_standard_uid = self
            .uid_headers
            .iter()
            .any(|h| h.eq_ignore_ascii_case("X-Remote-Uid"));
        if !self.uid_headers.is_empty() && !has_standard_uid {
            errs.push(
                "--requestheader-uid-headers is set without specifying the standard \
                 X-Remote-Uid header - API aggregation will not work"
                    .to_owned(),
            );
        }
        errs
    }
}

/// Upstream's `x509.Verifier` around `requestHeaderAuthRequestHandler`.
#[derive(Clone, Debug)]
pub struct RequestHeaderAuthenticator {
    ca: CaVerifier,
    memo_key: usize,
    allowed_names: Vec<String>,
    username_headers: Vec<HeaderName>,
    uid_headers: Vec<HeaderName>,
    group_headers: Vec<HeaderName>,
    extra_header_prefixes: Vec<String>,
}

impl RequestHeaderAuthenticator {
    pub fn new(cfg: &RequestHeaderConfig) -> Result<Self> {
        Self::with_ca(CaVerifier::from_file(&cfg.client_ca_file)?, cfg)
    }

    /// Like [`Self::new`], with the CA bundle given as PEM instead of read from
    /// `cfg.client_ca_file`.
    pub fn from_pem(ca_pem: &[u8], cfg: &RequestHeaderConfig) -> Result<Self> {
        Self::with_ca(CaVerifier::from_pem(ca_pem, "<in memory>")?, cfg)
    }

    fn with_ca(ca: CaVerifier, cfg: &RequestHeaderConfig) -> Result<Self> {
        Ok(RequestHeaderAuthenticator {
            ca,
            memo_key: super::peer::next_memo_key(),
            allowed_names: cfg.allowed_names.clone(),
            username_headers: header_names(&cfg.username_headers),
            uid_headers: header_names(&cfg.uid_headers),
            group_headers: header_names(&cfg.group_headers),
            extra_header_prefixes: cfg.extra_header_prefixes.clone(),
        })
    }

    fn authenticate_sync(&self, req: &AuthRequest<'_>) -> Result<Option<Response>> {
        let Some(peer) = req.peer_certificates else {
            return Ok(None);
        };
        // Whether this connection's certificate may speak for users is the same for all
        // its requests: computed once per connection.
        let trusted = peer
            .memoize(self.memo_key, || self.trusts(req))
            .map_err(Error::InvalidCredentials)?;
        if !trusted {
            return Ok(None);
        }
        Ok(self.user_from_headers(req.headers))
    }

    /// `Ok(false)` with no certificate; an error for one that does not verify or whose
    /// common name is not allowed.
    fn trusts(&self, req: &AuthRequest<'_>) -> Result<bool, String> {
        let Some(leaf) = self.ca.verify(req.peer_certificates)? else {
            return Ok(false);
        };
        if !self.allowed_names.is_empty() {
            let cn = CertInfo::parse(leaf)?.common_name;
            if !self.allowed_names.contains(&cn) {
                return Err(format!(
                    "x509: subject with cn={cn} is not in the allowed list"
                ));
            }
        }
        Ok(true)
    }

    /// Upstream's `requestHeaderAuthRequestHandler`: no username, no opinion.
    fn user_from_headers(&self, headers: &HeaderMap) -> Option<Response> {
        let name = first_value(headers, &self.username_headers)?;
        let uid = first_value(headers, &self.uid_headers).unwrap_or_default();
        let groups = self
            .group_headers
            .iter()
            .flat_map(|h| headers.get_all(h))
            .map(value_str)
            .filter(|v| !v.is_empty())
            .map(Cow::into_owned)
            .collect();
        let mut user = UserInfo {
            name,
            uid,
            groups,
            extra: Default::default(),
        };
        let mut consumed: Vec<HeaderName> = self
            .username_headers
            .iter()
            .chain(&self.uid_headers)
            .chain(&self.group_headers)
            .cloned()
            .collect();
        // Prefixes first, then headers, so values keep the order of the prefix list.
        for prefix in &self.extra_header_prefixes {
            for name in headers.keys() {
                let Some(rest) = strip_prefix_ignore_case(name.as_str(), prefix) else {
                    continue;
                };
                let key = unescape_extra_key(&rest.to_lowercase());
                let values = headers
                    .get_all(name)
                    .iter()
                    .map(|v| value_str(v).into_owned());
                user.extra.entry(key).or_default().extend(values);
                if !consumed.contains(name) {
                    consumed.push(name.clone());
                }
            }
        }
        Some(Response {
            user,
            consumed_headers: consumed,
            proxied: true,
            audiences: Vec::new(),
            notes: Default::default(),
        })
    }
}

/// A name that is not a valid header name can never match a request header; upstream
/// accepts it all the same, so it is dropped rather than refused.
fn header_names(names: &[String]) -> Vec<HeaderName> {
    names
        .iter()
        .filter_map(|n| match HeaderName::from_bytes(n.as_bytes()) {
            Ok(h) => Some(h),
            Err(_) => {
                tracing::warn!(header = %n, "request header name can never match; ignoring it");
                None
            }
        })
        .collect()
}

/// Go keeps header values as raw bytes; invalid UTF-8 becomes U+FFFD here, as it does
/// once upstream serializes the user.
fn value_str(v: &HeaderValue) -> Cow<'_, str> {
    String::from_utf8_lossy(v.as_bytes())
}

/// Upstream's `headerValue`: the first value of the first listed header that has a
/// non-empty first value.
fn first_value(headers: &HeaderMap, names: &[HeaderName]) -> Option<String> {
    names
        .iter()
        .filter_map(|n| headers.get(n))
        .map(value_str)
        .find(|v| !v.is_empty())
        .map(Cow::into_owned)
}

fn strip_prefix_ignore_case<'s>(s: &'s str, prefix: &str) -> Option<&'s str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// Go's `url.PathUnescape`, falling back to the key as given when it is malformed.
fn unescape_extra_key(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hi = bytes.get(i + 1).and_then(|c| (*c as char).to_digit(16));
            let lo = bytes.get(i + 2).and_then(|c| (*c as char).to_digit(16));
            let (Some(hi), Some(lo)) = (hi, lo) else {
                return key.to_owned();
            };
            // Two hex digits always fit in a byte.
            out.push(u8::try_from(hi * 16 + lo).unwrap_or_default());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Authenticator for RequestHeaderAuthenticator {
    fn authenticate<'a>(
        &'a self,
        req: &'a AuthRequest<'a>,
    ) -> BoxFuture<'a, Result<Option<Response>>> {
        Box::pin(std::future::ready(self.authenticate_sync(req)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authentication::testing::{Pki, request};

    fn auth(pki: &Pki, allowed: &[&str], uid_headers: &[&str]) -> RequestHeaderAuthenticator {
        let mut cfg = RequestHeaderConfig::new("/unused");
        cfg.allowed_names = allowed.iter().map(|s| (*s).to_owned()).collect();
        cfg.uid_headers = uid_headers.iter().map(|s| (*s).to_owned()).collect();
        RequestHeaderAuthenticator::from_pem(pki.ca_pem.as_bytes(), &cfg).unwrap()
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[tokio::test]
    async fn trusted_proxy_asserts_user_groups_uid_and_extra() {
        let pki = Pki::new();
        let a = auth(&pki, &["front-proxy"], &["X-Remote-Uid"]);
        let chain = pki.client("front-proxy", &[]);
        let h = headers(&[
            ("X-Remote-User", "alice"),
            ("X-Remote-Uid", "1234"),
            ("X-Remote-Group", "dev"),
            ("X-Remote-Group", ""),
            ("X-Remote-Group", "ops"),
            ("X-Remote-Extra-Scopes", "read"),
            ("X-Remote-Extra-Scopes", "write"),
            ("X-Remote-Extra-Example.com%2FKey", "v"),
            ("Accept", "application/json"),
        ]);
        let req = request("/api", &h, Some(&chain));
        let resp = a.authenticate(&req).await.unwrap().unwrap();
        assert_eq!(resp.user.name, "alice");
        assert_eq!(resp.user.uid, "1234");
        assert_eq!(resp.user.groups, vec!["dev".to_owned(), "ops".to_owned()]);
        assert_eq!(
            resp.user.extra["scopes"],
            vec!["read".to_owned(), "write".to_owned()]
        );
        assert_eq!(resp.user.extra["example.com/key"], vec!["v".to_owned()]);
        let consumed: Vec<&str> = resp
            .consumed_headers
            .iter()
            .map(HeaderName::as_str)
            .collect();
        for name in [
            "x-remote-user",
            "x-remote-uid",
            "x-remote-group",
            "x-remote-extra-scopes",
            "x-remote-extra-example.com%2fkey",
        ] {
            assert!(consumed.contains(&name), "{name} not in {consumed:?}");
        }
        assert!(!consumed.contains(&"accept"));
    }

    #[tokio::test]
    async fn no_username_header_is_no_opinion() {
        let pki = Pki::new();
        let a = auth(&pki, &[], &[]);
        let chain = pki.client("front-proxy", &[]);
        let h = headers(&[("X-Remote-Group", "dev"), ("X-Remote-User", "")]);
        let req = request("/api", &h, Some(&chain));
        assert_eq!(a.authenticate(&req).await.unwrap(), None);
    }

    #[tokio::test]
    async fn first_nonempty_username_header_wins() {
        let pki = Pki::new();
        let mut cfg = RequestHeaderConfig::new("/unused");
        cfg.username_headers = vec!["X-First".into(), "X-Second".into()];
        let a = RequestHeaderAuthenticator::from_pem(pki.ca_pem.as_bytes(), &cfg).unwrap();
        let chain = pki.client("proxy", &[]);
        let h = headers(&[("X-First", ""), ("X-Second", "bob")]);
        let req = request("/", &h, Some(&chain));
        assert_eq!(
            a.authenticate(&req).await.unwrap().unwrap().user.name,
            "bob"
        );
    }

    #[tokio::test]
    async fn empty_allowed_names_accepts_any_cn() {
        let pki = Pki::new();
        let a = auth(&pki, &[], &[]);
        let chain = pki.client("anything", &[]);
        let h = headers(&[("X-Remote-User", "alice")]);
        let req = request("/", &h, Some(&chain));
        assert_eq!(
            a.authenticate(&req).await.unwrap().unwrap().user.name,
            "alice"
        );
    }

    #[tokio::test]
    async fn cn_not_allowed_is_an_error() {
        let pki = Pki::new();
        let a = auth(&pki, &["front-proxy"], &[]);
        let chain = pki.client("someone-else", &[]);
        let h = headers(&[("X-Remote-User", "alice")]);
        let req = request("/", &h, Some(&chain));
        let err = a.authenticate(&req).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "x509: subject with cn=someone-else is not in the allowed list"
        );
    }

    #[tokio::test]
    async fn cert_from_other_ca_is_an_error_even_with_headers() {
        let pki = Pki::new();
        let other = Pki::new();
        let a = auth(&pki, &[], &[]);
        let chain = other.client("front-proxy", &[]);
        let h = headers(&[("X-Remote-User", "alice")]);
        let req = request("/", &h, Some(&chain));
        let err = a.authenticate(&req).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "x509: certificate signed by unknown authority"
        );
    }

    #[tokio::test]
    async fn no_client_cert_ignores_headers() {
        let pki = Pki::new();
        let a = auth(&pki, &[], &[]);
        let h = headers(&[("X-Remote-User", "alice")]);
        let req = request("/", &h, None);
        assert_eq!(a.authenticate(&req).await.unwrap(), None);
    }

    #[test]
    fn unescape_matches_path_unescape() {
        assert_eq!(unescape_extra_key("a%2fb"), "a/b");
        assert_eq!(unescape_extra_key("a+b"), "a+b");
        assert_eq!(unescape_extra_key("bad%zz"), "bad%zz");
        assert_eq!(unescape_extra_key("trailing%2"), "trailing%2");
        assert_eq!(unescape_extra_key("%41"), "A");
    }

    #[test]
    fn validate_flags_whitespace_and_nonstandard_uid() {
        let mut cfg = RequestHeaderConfig::new("/ca");
        assert!(cfg.validate().is_empty());
        cfg.group_headers.push(" ".into());
        cfg.uid_headers = vec!["X-Custom-Uid".into()];
        assert_eq!(cfg.validate().len(), 2);
    }
}
