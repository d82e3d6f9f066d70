//! The connect subresources' options, decoded from the query as upstream's parameter
//! codec decodes them (`Convert_Slice_string_To_bool`, `..._To_Pointer_int64`: Go's
//! `strconv` error text, answered 400 by `ConnectResource`/`getRequestOptions`), and
//! upstream's `ValidatePodLogOptions`.

use kas_apimachinery::Status;
use kas_apimachinery::validation::field::{self, Path};
use kas_endpoints::url::Query;

/// Upstream's `PodLogOptions` as the kubelet's query carries it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodLogOptions {
    pub container: String,
    pub follow: bool,
    pub previous: bool,
    pub timestamps: bool,
    pub since_seconds: Option<i64>,
    pub since_time: Option<String>,
    pub tail_lines: Option<i64>,
    pub limit_bytes: Option<i64>,
    pub insecure_skip_tls_verify_backend: bool,
}

/// Go's `Convert_Slice_string_To_bool`: absent, `0` or `false` (any case) is false.
pub fn boolean(q: &Query, key: &str) -> bool {
    match q.first(key) {
        None => false,
        Some(v) => !(v == "0" || v.eq_ignore_ascii_case("false")),
    }
}

/// Go's `strconv.ParseInt(s, 10, 64)` error text under `Convert_Slice_string_To_Pointer_int64`.
pub fn int64(q: &Query, key: &str) -> kas_registry::Result<Option<i64>> {
    let Some(v) = q.first(key) else {
        return Ok(None);
    };
    parse_int(v, "ParseInt").map(Some)
}

fn parse_int(v: &str, func: &str) -> kas_registry::Result<i64> {
    v.parse::<i64>().map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        Status::bad_request(&format!("strconv.{func}: parsing {v:?}: {why}")).into()
    })
}

/// `PodPortForwardOptions.ports` (`Convert_Slice_string_To_Slice_int32`: every value,
/// comma-separated, through `strconv.Atoi`).
pub fn ports(q: &Query) -> kas_registry::Result<Vec<i64>> {
    let mut out = Vec::new();
    for v in q.all("ports") {
        for p in v.split(',') {
            out.push(parse_int(p, "Atoi")?);
        }
    }
    Ok(out)
}

impl PodLogOptions {
    pub fn decode(query: Option<&str>) -> kas_registry::Result<PodLogOptions> {
        let q = Query::parse(query.unwrap_or(""));
        Ok(PodLogOptions {
            container: q.first("container").unwrap_or("").to_owned(),
            follow: boolean(&q, "follow"),
            previous: boolean(&q, "previous"),
            timestamps: boolean(&q, "timestamps"),
            since_seconds: int64(&q, "sinceSeconds")?,
            since_time: q
                .first("sinceTime")
                .filter(|t| !t.is_empty())
                .map(str::to_owned),
            tail_lines: int64(&q, "tailLines")?,
            limit_bytes: int64(&q, "limitBytes")?,
            insecure_skip_tls_verify_backend: boolean(&q, "insecureSkipTLSVerifyBackend"),
        })
    }

    /// Upstream's `ValidatePodLogOptions`, as the Invalid error `LogREST.Get` answers.
    pub fn validate(&self, name: &str) -> kas_registry::Result<()> {
        let mut errs = Vec::new();
        if let Some(t) = self.tail_lines.filter(|t| *t < 0) {
            errs.push(field::invalid(
                &Path::new("tailLines"),
                t,
                "must be greater than or equal to 0",
            ));
        }
        if let Some(b) = self.limit_bytes.filter(|b| *b < 1) {
            errs.push(field::invalid(
                &Path::new("limitBytes"),
                b,
                "must be greater than 0",
            ));
        }
        match (self.since_seconds, &self.since_time) {
            (Some(_), Some(_)) => errs.push(field::forbidden(
                &Path::new(""),
                "at most one of `sinceTime` or `sinceSeconds` may be specified",
            )),
            (Some(s), None) if s < 1 => errs.push(field::invalid(
                &Path::new("sinceSeconds"),
                s,
                "must be greater than 0",
            )),
            _ => {}
        }
        match errs.is_empty() {
            true => Ok(()),
            false => Err(field::to_status("", "PodLogOptions", name, &errs).into()),
        }
    }

    /// The kubelet's query (upstream's `LogLocation`), encoded sorted by key as Go's
    /// `url.Values.Encode` does.
    pub fn kubelet_query(&self) -> String {
        let mut params: Vec<(&str, String)> = Vec::new();
        let flag = |on: bool| on.then(|| "true".to_owned());
        let pairs = [
            ("follow", flag(self.follow)),
            ("limitBytes", self.limit_bytes.map(|v| v.to_string())),
            ("previous", flag(self.previous)),
            ("sinceSeconds", self.since_seconds.map(|v| v.to_string())),
            ("sinceTime", self.since_time.clone()),
            ("tailLines", self.tail_lines.map(|v| v.to_string())),
            ("timestamps", flag(self.timestamps)),
        ];
        for (k, v) in pairs {
            if let Some(v) = v {
                params.push((k, v));
            }
        }
        params
            .iter()
            .map(|(k, v)| format!("{k}={}", escape(v)))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// Upstream's `PodExecOptions` and `PodAttachOptions` (attach has no command), decoded
/// from the request's query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamOptions {
    pub container: String,
    pub stdin: bool,
    pub stdout: bool,
    pub stderr: bool,
    pub tty: bool,
    pub command: Vec<String>,
}

impl StreamOptions {
    pub fn decode(q: &Query, with_command: bool) -> StreamOptions {
        StreamOptions {
            container: q.first("container").unwrap_or("").to_owned(),
            stdin: boolean(q, "stdin"),
            stdout: boolean(q, "stdout"),
            stderr: boolean(q, "stderr"),
            tty: boolean(q, "tty"),
            command: match with_command {
                true => q.all("command").map(str::to_owned).collect(),
                false => Vec::new(),
            },
        }
    }

    /// The kubelet's query (upstream's `streamParams`, `url.Values.Encode` sorting the
    /// keys): `command` per word, then `error`, `input`, `output`, `tty` as `1`.
    pub fn kubelet_query(&self) -> String {
        let mut params: Vec<String> = self
            .command
            .iter()
            .map(|c| format!("command={}", escape(c)))
            .collect();
        for (key, on) in [
            ("error", self.stderr),
            ("input", self.stdin),
            ("output", self.stdout),
            ("tty", self.tty),
        ] {
            if on {
                params.push(format!("{key}=1"));
            }
        }
        params.join("&")
    }
}

/// The kubelet's query of a port forward (`streamParams`): `port` with the ports
/// comma-joined, none without ports.
pub fn ports_query(ports: &[i64]) -> String {
    if ports.is_empty() {
        return String::new();
    }
    let joined: Vec<String> = ports.iter().map(i64::to_string).collect();
    format!("port={}", escape(&joined.join(",")))
}

/// Go's `url.QueryEscape` for the values above.
fn escape(v: &str) -> String {
    let mut out = String::new();
    for b in v.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_integers_are_bad_requests_in_go_words() {
        let err = PodLogOptions::decode(Some("tailLines=abc"))
            .unwrap_err()
            .to_status();
        assert_eq!(err.code, 400);
        assert_eq!(
            err.message.as_deref(),
            Some("strconv.ParseInt: parsing \"abc\": invalid syntax")
        );
        let err = PodLogOptions::decode(Some("limitBytes=99999999999999999999"))
            .unwrap_err()
            .to_status();
        assert_eq!(
            err.message.as_deref(),
            Some("strconv.ParseInt: parsing \"99999999999999999999\": value out of range")
        );
        let q = Query::parse("ports=80,x");
        assert_eq!(
            ports(&q).unwrap_err().to_status().message.as_deref(),
            Some("strconv.Atoi: parsing \"x\": invalid syntax")
        );
    }

    #[test]
    fn validation_follows_upstream() {
        let opts = PodLogOptions::decode(Some("tailLines=-1&limitBytes=0")).unwrap();
        let err = opts.validate("p").unwrap_err().to_status();
        assert_eq!(err.code, 422);
        assert_eq!(
            err.message.as_deref(),
            Some(
                "PodLogOptions \"p\" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]"
            )
        );
        let opts = PodLogOptions::decode(Some("sinceSeconds=0")).unwrap();
        assert_eq!(
            opts.validate("p")
                .unwrap_err()
                .to_status()
                .message
                .as_deref(),
            Some(
                "PodLogOptions \"p\" is invalid: sinceSeconds: Invalid value: 0: must be greater than 0"
            )
        );
    }

    #[test]
    fn kubelet_query_is_sorted() {
        let opts =
            PodLogOptions::decode(Some("timestamps=1&follow=true&tailLines=5&previous=false"))
                .unwrap();
        assert_eq!(
            opts.kubelet_query(),
            "follow=true&tailLines=5&timestamps=true"
        );
    }
}
