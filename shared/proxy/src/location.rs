//! Where a request goes: upstream's `*url.URL` of a proxy location, as far as a proxy
//! needs it.

use http::Uri;

use crate::{Error, Result};

/// A backend location: scheme (`http` or `https`; empty is `http`, as upstream's
/// `normalizeLocation`), `host[:port]` (IPv6 literals in brackets), path and raw query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    pub scheme: String,
    pub host: String,
    pub path: String,
    pub query: String,
}

impl Location {
    pub fn scheme(&self) -> &str {
        match self.scheme.as_str() {
            "" => "http",
            s => s,
        }
    }

    /// Go's `url.URL.String()` of the location.
    pub fn url(&self) -> String {
        let mut out = format!("{}://{}{}", self.scheme(), self.host, self.path);
        if !self.query.is_empty() {
            out.push('?');
            out.push_str(&self.query);
        }
        out
    }

    /// The request target: the path (`/` when empty) and the query.
    pub fn path_and_query(&self) -> String {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        match self.query.as_str() {
            "" => path.to_owned(),
            q => format!("{path}?{q}"),
        }
    }

    /// The absolute URI the pooled client sends to.
    pub fn uri(&self) -> Result<Uri> {
        let text = format!("{}://{}{}", self.scheme(), self.host, self.path_and_query());
        text.parse()
            .map_err(|e| Error::InvalidLocation(format!("parse {:?}: {e}", self.url())))
    }

    /// Go's `netutil.CanonicalAddr`: the host and port to dial, the scheme's port when
    /// the host names none.
    pub fn dial_address(&self) -> String {
        let has_port = match self.host.rfind(']') {
            Some(end) => self.host[end..].contains(':'),
            None => self.host.contains(':'),
        };
        if has_port {
            self.host.clone()
        } else if self.scheme() == "https" {
            format!("{}:443", self.host)
        } else {
            format!("{}:80", self.host)
        }
    }

    /// The host without its port or brackets: the name a certificate is checked against.
    pub fn host_name(&self) -> &str {
        let addr = self.host.as_str();
        if let Some(rest) = addr.strip_prefix('[') {
            return rest.split(']').next().unwrap_or(rest);
        }
        addr.split(':').next().unwrap_or(addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_urls_read_as_go_writes_them() {
        let loc = Location {
            scheme: "https".into(),
            host: "127.0.0.1:10250".into(),
            path: "/exec/ns/p/c".into(),
            query: "command=ls".into(),
        };
        assert_eq!(loc.url(), "https://127.0.0.1:10250/exec/ns/p/c?command=ls");
        assert_eq!(loc.dial_address(), "127.0.0.1:10250");
        assert_eq!(
            loc.uri().unwrap().to_string(),
            "https://127.0.0.1:10250/exec/ns/p/c?command=ls"
        );
        let v6 = Location {
            host: "[fd00::1]".into(),
            path: String::new(),
            query: String::new(),
            ..loc
        };
        assert_eq!(
            (v6.dial_address().as_str(), v6.host_name()),
            ("[fd00::1]:443", "fd00::1")
        );
        assert_eq!(v6.path_and_query(), "/");
        let plain = Location {
            host: "10.0.0.1".into(),
            ..Location::default()
        };
        assert_eq!(
            (plain.scheme(), plain.dial_address().as_str()),
            ("http", "10.0.0.1:80")
        );
    }
}
