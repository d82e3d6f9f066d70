//! Calling a webhook from synchronous code inside a request.

/// Runs `fut` to completion from synchronous code on a worker of the multi-threaded
/// runtime (a compare-and-swap callback that must call a webhook), which hands its other
/// tasks to another thread meanwhile, as a Go handler blocks its goroutine.
pub fn block_on<F: std::future::Future>(fut: F) -> Result<F::Output, String> {
    let handle = tokio::runtime::Handle::try_current().map_err(|e| e.to_string())?;
    if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
        return Err("webhooks called from a write need the multi-threaded runtime".to_owned());
    }
    Ok(tokio::task::block_in_place(|| handle.block_on(fut)))
}
