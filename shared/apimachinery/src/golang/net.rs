//! `net` and `net/url`'s error texts, for the clients the roles run (connecters to kubelets
//! and backends, webhooks): `syscall.Errno` as Go prints it and `url.Error`'s
//! `Get "<url>": <err>`.

/// An OS error as Go's `syscall.Errno` prints it: lowercase, without Rust's
/// `(os error N)` (`connection refused`).
pub fn errno(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = match text.find(" (os error") {
        Some(i) => &text[..i],
        None => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A failed dial as Go's `net.OpError` prints it: `dial tcp <addr>: connect: <errno>`.
pub fn dial_error(addr: &str, e: &std::io::Error) -> String {
    format!("dial tcp {addr}: connect: {}", errno(e))
}

/// Go's `url.Error` text for a client's request: `Get "<url>": <err>` (the method with
/// only its first letter upper case).
pub fn url_error(method: &str, url: &str, err: &str) -> String {
    let mut op = String::with_capacity(method.len());
    for (i, c) in method.chars().enumerate() {
        if i == 0 {
            op.extend(c.to_uppercase());
        } else {
            op.extend(c.to_lowercase());
        }
    }
    format!("{op} \"{url}\": {err}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_as_go_writes_them() {
        let e = std::io::Error::from_raw_os_error(111);
        assert_eq!(errno(&e), "connection refused");
        assert_eq!(
            url_error(
                "POST",
                "https://127.0.0.1:9443/authn",
                &dial_error("127.0.0.1:9443", &e)
            ),
            "Post \"https://127.0.0.1:9443/authn\": dial tcp 127.0.0.1:9443: connect: connection refused"
        );
    }
}
