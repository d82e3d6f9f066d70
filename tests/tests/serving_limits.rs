//! Header limits end to end, as upstream's Go server applies `MaxHeaderBytes: 1 << 20`:
//! up to about 1 MiB of headers crosses aggregator, core and extensions over HTTP/2 and
//! HTTP/1.1; above it the aggregator answers 431 (HTTP/1.1 counts the request line and
//! headers with Go's 4 KiB slop, HTTP/2 counts each field plus 32 bytes with 320 bytes of
//! slop).

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use kas_e2e::client::{Proto, Sender, connect_h2, request};
use kas_e2e::{NOT_FOUND_BODY, Role, TestCluster, start_cluster};

/// Nobody serves it: extensions, at the end of the chain, writes the 404.
const NOWHERE: &str = "/apis/nope.example.com/v1/things";

fn url(c: &TestCluster) -> String {
    format!("{}{NOWHERE}", c.url(Role::Aggregator, 0))
}

/// One request with an `x-big` header of `size` bytes, on a fresh connection (an HTTP/2
/// client writes it in 16 KiB frames: it has not read the server's settings yet).
async fn fresh(c: &TestCluster, proto: Proto, size: usize) -> anyhow::Result<(StatusCode, String)> {
    let bearer = c.bearer();
    let big = "x".repeat(size);
    let headers = [("authorization", bearer.as_str()), ("x-big", big.as_str())];
    let a = request(&url(c), Method::GET, &headers, &c.admin_tls(proto), proto).await?;
    Ok((a.status, a.text()))
}

/// The same on an open HTTP/2 connection.
async fn on(sender: &mut Sender, c: &TestCluster, size: usize) -> anyhow::Result<StatusCode> {
    let mut req = Request::get(url(c))
        .header("authorization", c.bearer())
        .body(Full::new(Bytes::new()))?;
    if size > 0 {
        req.headers_mut().insert("x-big", "x".repeat(size).parse()?);
    }
    let resp = sender.send_request(req).await?;
    let status = resp.status();
    resp.into_body().collect().await?;
    Ok(status)
}

#[tokio::test]
async fn up_to_a_mebibyte_of_headers_crosses_all_three_roles() {
    let c = start_cluster(|_| {});
    // 1 MiB exactly fits HTTP/1.1's limit (Go's slop) but not HTTP/2's (32 bytes a field).
    for (proto, sizes) in [
        (Proto::H2, &[100_000, 1_000_000][..]),
        (Proto::H1, &[100_000, 1_000_000, 1 << 20][..]),
    ] {
        for &size in sizes {
            let (status, text) = fresh(&c, proto, size).await.unwrap();
            assert_eq!(
                (status.as_u16(), text.as_str()),
                (404, NOT_FOUND_BODY),
                "{proto:?} {size}"
            );
        }
    }
    let mut sender = connect_h2(&url(&c).parse().unwrap(), &c.admin_tls(Proto::H2))
        .await
        .unwrap();
    assert_eq!(on(&mut sender, &c, 0).await.unwrap(), 404);
    // Now in frames of the server's size.
    assert_eq!(on(&mut sender, &c, 1_000_000).await.unwrap(), 404);
}

#[tokio::test]
async fn headers_over_the_limit_get_gos_431() {
    let c = start_cluster(|_| {});
    let bearer = c.bearer();
    let tls = c.admin_tls(Proto::H1);
    // HTTP/1.1: Go's plain-text 431, and the connection closes. Far over the limit hyper
    // may stop reading first (its buffer limit is ours plus 64 KiB, give or take a read)
    // and answer 431 without a body.
    for size in [(1 << 20) + 5000, 1_400_000] {
        let big = "x".repeat(size);
        let headers = [("authorization", bearer.as_str()), ("x-big", big.as_str())];
        let a = request(&url(&c), Method::GET, &headers, &tls, Proto::H1)
            .await
            .unwrap();
        assert_eq!(a.status, 431, "{size}");
        assert_eq!(a.headers["connection"], "close", "{size}");
        if size < 1_100_000 || !a.body.is_empty() {
            assert_eq!(a.text(), "431 Request Header Fields Too Large", "{size}");
            assert_eq!(a.headers["content-type"], "text/plain; charset=utf-8");
        }
    }

    // HTTP/2: Go's HTML 431 on the stream, and the connection serves on.
    let html = "<h1>HTTP Error 431</h1><p>Request Header Field(s) Too Large</p>";
    let (status, text) = fresh(&c, Proto::H2, 1 << 20).await.unwrap();
    assert_eq!((status.as_u16(), text.as_str()), (431, html));
    let mut sender = connect_h2(&url(&c).parse().unwrap(), &c.admin_tls(Proto::H2))
        .await
        .unwrap();
    assert_eq!(on(&mut sender, &c, 0).await.unwrap(), 404);
    assert_eq!(on(&mut sender, &c, 1_100_000).await.unwrap(), 431);
    assert_eq!(on(&mut sender, &c, 0).await.unwrap(), 404);
    // Far over it the connection ends, as Go's does (there a field longer than the whole
    // limit is an HPACK error; h2 refuses that many CONTINUATION frames).
    assert!(on(&mut sender, &c, 2_000_000).await.is_err());
}
