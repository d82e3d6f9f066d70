//! Two upgraded connections joined both ways until either side ends, as upstream's
//! `tryUpgrade` copies: when one direction is done, both connections close.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

/// How long closing (a TLS close_notify, a flush) may take once one side has ended.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// Copies `a` to `b` and `b` to `a` until one direction ends, then closes both.
pub async fn splice<A, B>(a: A, b: B)
where
    A: AsyncRead + AsyncWrite + Unpin,
    B: AsyncRead + AsyncWrite + Unpin,
{
    let (mut a_read, mut a_write) = tokio::io::split(a);
    let (mut b_read, mut b_write) = tokio::io::split(b);
    let ended = tokio::select! {
        r = tokio::io::copy(&mut a_read, &mut b_write) => ("client to backend", r),
        r = tokio::io::copy(&mut b_read, &mut a_write) => ("backend to client", r),
    };
    if let (direction, Err(e)) = ended {
        tracing::debug!(direction, error = %e, "proxy: spliced connection ended");
    }
    let close = async {
        let _ = a_write.shutdown().await;
        let _ = b_write.shutdown().await;
    };
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, close).await;
}
