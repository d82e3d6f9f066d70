//! A TCP relay from a listener inside a network namespace to an address dialed from the
//! host: a socket belongs to the namespace of the thread that created it, so a short-lived
//! thread enters the namespace (setns) to bind the listener, and the relay's own thread,
//! which stays in the host's namespace, dials out.

use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::path::Path;

pub(super) struct Forward {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Forward {
    pub(super) fn start(
        netns: &Path,
        listen: SocketAddr,
        target: SocketAddr,
    ) -> std::io::Result<Forward> {
        let listener = bind_inside(netns, listen)?;
        listener.set_nonblocking(true)?;
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                loop {
                    let inbound = tokio::select! {
                        _ = &mut stopped => return,
                        accepted = listener.accept() => match accepted {
                            Ok((tcp, _)) => tcp,
                            Err(_) => continue,
                        },
                    };
                    tokio::spawn(relay(inbound, target));
                }
            });
        });
        Ok(Forward {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

async fn relay(mut inbound: tokio::net::TcpStream, target: SocketAddr) {
    let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await else {
        return;
    };
    let _ = inbound.set_nodelay(true);
    let _ = outbound.set_nodelay(true);
    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
}

pub(super) fn bind_inside(netns: &Path, listen: SocketAddr) -> std::io::Result<TcpListener> {
    let ns = File::open(netns)?;
    std::thread::scope(|s| {
        s.spawn(|| {
            nix::sched::setns(&ns, nix::sched::CloneFlags::CLONE_NEWNET)
                .map_err(std::io::Error::from)?;
            TcpListener::bind(listen)
        })
        .join()
        .unwrap_or_else(|_| Err(std::io::Error::other("the binding thread panicked")))
    })
}

impl Drop for Forward {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
