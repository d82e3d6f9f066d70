//! Network namespaces for test backends: upstream refuses loopback addresses in Endpoints
//! and EndpointSlices (and so does this server), so a backend that a Service must reach
//! runs in a namespace of its own, on the far end of a veth pair with a private /30.
//!
//! A namespace takes a numbered slot: a lock file under `/run/kas-e2e/` held with `flock`
//! for as long as the [`Netns`] lives, so names and subnets are unique across the tests of
//! one process and across test processes, and a slot whose owner was killed (the lock dies
//! with it) is cleaned up by the next owner. Slot `k` is namespace `kas-e2e-<k>`, host
//! interface `kase2e<k>h` at `198.18.0.0 + 4k + 1` and `eth0` inside at `+ 2` (RFC 2544's
//! benchmarking range: no host network uses it and Endpoint validation accepts it).
//!
//! Everything is removed on drop (processes, forwards, the namespace, the veth pair and so
//! the host routes through it), also when a test panics. Needs root and iproute2's `ip`.

use std::ffi::OsStr;
use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod forward;

use forward::Forward;

/// Where the slot locks live.
const LOCK_DIR: &str = "/run/kas-e2e";
/// How many namespaces may exist at once on the machine.
const SLOTS: u32 = 1024;
/// The first address of the slots' subnets (198.18.0.0/15, RFC 2544).
const BASE: u32 = u32::from_be_bytes([198, 18, 0, 0]);

/// A network namespace with a veth pair to the host; removed on drop.
pub struct Netns {
    slot: u32,
    name: String,
    host_if: String,
    host_ip: Ipv4Addr,
    ip: Ipv4Addr,
    extra: Mutex<Vec<Ipv4Addr>>,
    forwards: Mutex<Vec<Forward>>,
    _lock: File,
}

impl Netns {
    /// Takes a free slot and sets up its namespace: veth pair up, addresses, loopback up,
    /// a default route to the host. Panics with the reason when `ip` is missing, we are not
    /// root, or setting up fails.
    pub fn new() -> Netns {
        preflight();
        let start = std::process::id() % SLOTS;
        for i in 0..SLOTS {
            let slot = (start + i) % SLOTS;
            if let Some(lock) = try_lock(slot) {
                return Netns::claim(slot, lock);
            }
        }
        panic!("all {SLOTS} network namespace slots under {LOCK_DIR} are taken")
    }

    /// Sets up `slot`, whose lock we hold, removing what a killed owner left there.
    fn claim(slot: u32, lock: File) -> Netns {
        let ns = Netns::in_slot(slot, lock);
        ns.remove_stale();
        ns.set_up()
            .unwrap_or_else(|e| panic!("setting up {}: {e}", ns.name));
        ns
    }

    fn in_slot(slot: u32, lock: File) -> Netns {
        let base = BASE + 4 * slot;
        Netns {
            slot,
            name: format!("kas-e2e-{slot}"),
            host_if: format!("kase2e{slot}h"),
            host_ip: Ipv4Addr::from(base + 1),
            ip: Ipv4Addr::from(base + 2),
            extra: Mutex::new(Vec::new()),
            forwards: Mutex::new(Vec::new()),
            _lock: lock,
        }
    }

    /// The namespace's name, as `ip netns` knows it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The slot number (unique among the namespaces that exist now).
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// The backend's address: `eth0` inside the namespace; what an EndpointSlice names.
    pub fn ip(&self) -> Ipv4Addr {
        self.ip
    }

    /// The addresses added with [`Netns::add_address`] or [`Netns::claim_address_in`].
    pub fn extra_addresses(&self) -> Vec<Ipv4Addr> {
        lock(&self.extra).clone()
    }

    /// The host's end of the veth pair, reachable from inside the namespace.
    pub fn host_ip(&self) -> Ipv4Addr {
        self.host_ip
    }

    /// Adds `ip`/32 inside the namespace and a host route to it through the veth pair, as
    /// kube-proxy makes a Service's ClusterIP reach a backend (the port is not rewritten:
    /// give the Service `port` = `targetPort`). Fails with `AlreadyExists` when the host
    /// already routes `ip` (another test holds it).
    pub fn try_add_address(&self, ip: Ipv4Addr) -> std::io::Result<()> {
        let dest = format!("{ip}/32");
        let via = self.ip.to_string();
        if let Err(e) = ip_cmd(&["route", "add", &dest, "via", &via, "dev", &self.host_if]) {
            let kind = if e.contains("File exists") {
                std::io::ErrorKind::AlreadyExists
            } else {
                std::io::ErrorKind::Other
            };
            return Err(std::io::Error::new(kind, format!("route to {dest}: {e}")));
        }
        if let Err(e) = ip_cmd(&["-n", &self.name, "addr", "add", &dest, "dev", "eth0"]) {
            let _ = ip_cmd(&["route", "del", &dest, "dev", &self.host_if]);
            return Err(std::io::Error::other(format!("address {dest}: {e}")));
        }
        lock(&self.extra).push(ip);
        Ok(())
    }

    /// [`Netns::try_add_address`], panicking on failure.
    pub fn add_address(&self, ip: Ipv4Addr) {
        self.try_add_address(ip)
            .unwrap_or_else(|e| panic!("{}: {e}", self.name));
    }

    /// Removes an address added by [`Netns::add_address`] and its host route: the address
    /// stops answering, as a ClusterIP whose proxy rules are gone.
    pub fn remove_address(&self, ip: Ipv4Addr) {
        let dest = format!("{ip}/32");
        let _ = ip_cmd(&["route", "del", &dest, "dev", &self.host_if]);
        let _ = ip_cmd(&["-n", &self.name, "addr", "del", &dest, "dev", "eth0"]);
        lock(&self.extra).retain(|a| *a != ip);
    }

    /// Picks an address of `cidr` (IPv4, e.g. the cluster's `--service-cluster-ip-range`,
    /// `10.0.0.0/24` by default) that no other namespace routes, and adds it as
    /// [`Netns::add_address`] does: the ClusterIP to give a Service (`spec.clusterIP`).
    /// Candidates start in the range's static band (upstream allocates dynamically from
    /// the upper band first), skip the first address (the `kubernetes` Service's), and
    /// depend on the slot, so concurrent tests rarely try the same one; the host's routing
    /// table decides races.
    pub fn claim_address_in(&self, cidr: &str) -> Ipv4Addr {
        let (net, len) = parse_cidr(cidr).unwrap_or_else(|| panic!("not an IPv4 CIDR: {cidr}"));
        let size = 1u64 << (32 - len);
        assert!(size >= 8, "{cidr} is too small to share");
        // Offsets 2 ..= size - 2: not the network, the first address, nor broadcast.
        let usable = size - 3;
        let band = (size / 16).clamp(16, 256).min(usable);
        let first = u64::from(self.slot) % band.saturating_sub(2).max(1);
        for i in 0..usable {
            let offset = 2 + (first + i) % usable;
            let ip = Ipv4Addr::from(u32::from(net) + offset as u32);
            match self.try_add_address(ip) {
                Ok(()) => return ip,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => panic!("{}: {e}", self.name),
            }
        }
        panic!("every address of {cidr} is routed by another test")
    }

    /// A command that runs `program` inside the namespace (`ip netns exec`).
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.name]).arg(program);
        cmd
    }

    /// Starts `program` with `args` inside the namespace, stdout and stderr appended to
    /// `log`; killed when the returned handle drops (and with the namespace).
    pub fn spawn<I, S>(
        &self,
        program: impl AsRef<OsStr>,
        args: I,
        log: impl Into<PathBuf>,
    ) -> NsProcess
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let log = log.into();
        let program = program.as_ref().to_owned();
        let out = File::options()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap_or_else(|e| panic!("log {}: {e}", log.display()));
        let err = out.try_clone().expect("log handle");
        let child = self
            .command(&program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {program:?} in {}: {e}", self.name));
        let mut process = NsProcess {
            child,
            log,
            exit: None,
        };
        self.wait_inside(&mut process);
        process
    }

    /// Waits until `ip netns exec` has entered the namespace (or the process exited), so
    /// that dropping the namespace right after `spawn` finds the process inside.
    fn wait_inside(&self, process: &mut NsProcess) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while process.alive() && Instant::now() < deadline {
            if inside(process.pid(), &self.name) {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Accepts TCP connections on `listen` inside the namespace and relays each to
    /// `target` dialed from the host, until the namespace drops. With `listen` =
    /// `127.0.0.1:<port>` and `target` = the aggregator's `127.0.0.1:<port>`, a process
    /// inside reaches the cluster at the URL (and serving certificate name) the cluster's
    /// kubeconfig already has.
    pub fn forward(&self, listen: SocketAddr, target: SocketAddr) {
        let path = Path::new("/run/netns").join(&self.name);
        let fwd = Forward::start(&path, listen, target)
            .unwrap_or_else(|e| panic!("forwarding {listen} in {} to {target}: {e}", self.name));
        lock(&self.forwards).push(fwd);
    }

    fn set_up(&self) -> Result<(), String> {
        let host_cidr = format!("{}/30", self.host_ip);
        let ns_cidr = format!("{}/30", self.ip);
        let host_ip = self.host_ip.to_string();
        let n = self.name.as_str();
        ip_cmd(&["netns", "add", n])?;
        ip_cmd(&[
            "link",
            "add",
            &self.host_if,
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            n,
        ])?;
        ip_cmd(&["addr", "add", &host_cidr, "dev", &self.host_if])?;
        ip_cmd(&["link", "set", &self.host_if, "up"])?;
        ip_cmd(&["-n", n, "addr", "add", &ns_cidr, "dev", "eth0"])?;
        ip_cmd(&["-n", n, "link", "set", "eth0", "up"])?;
        ip_cmd(&["-n", n, "link", "set", "lo", "up"])?;
        ip_cmd(&["-n", n, "route", "add", "default", "via", &host_ip])
    }

    /// Removes what a killed earlier owner of the slot left behind.
    fn remove_stale(&self) {
        if Path::new("/run/netns").join(&self.name).exists()
            || Path::new("/sys/class/net").join(&self.host_if).exists()
        {
            eprintln!("kas-e2e: removing stale network namespace {}", self.name);
            self.tear_down();
        }
    }

    fn tear_down(&self) {
        lock(&self.forwards).clear();
        if Path::new("/run/netns").join(&self.name).exists() {
            kill_inside(&self.name);
            let _ = ip_cmd(&["netns", "del", &self.name]);
        }
        // Deleting the namespace destroys the pair unless a process still holds it.
        if Path::new("/sys/class/net").join(&self.host_if).exists() {
            let _ = ip_cmd(&["link", "del", &self.host_if]);
        }
        lock(&self.extra).clear();
    }
}

impl Default for Netns {
    fn default() -> Self {
        Netns::new()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        self.tear_down();
    }
}

/// A process started inside a namespace; killed on drop.
pub struct NsProcess {
    child: Child,
    log: PathBuf,
    exit: Option<ExitStatus>,
}

impl NsProcess {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn log_path(&self) -> &Path {
        &self.log
    }

    /// The log so far (stdout and stderr).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Whether it still runs (reaps it when it exited).
    pub fn alive(&mut self) -> bool {
        if self.exit.is_none() {
            self.exit = self.child.try_wait().ok().flatten();
        }
        self.exit.is_none()
    }

    /// Its exit status, once exited.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.alive();
        self.exit
    }

    /// SIGKILL, then reaps it.
    pub fn kill(&mut self) {
        if self.alive() {
            let _ = self.child.kill();
            self.exit = self.child.wait().ok();
        }
    }

    /// SIGTERM, then SIGKILL when it has not exited within `grace`.
    pub fn terminate(&mut self, grace: Duration) {
        if !self.alive() {
            return;
        }
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if !self.alive() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill();
    }
}

impl Drop for NsProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Panics with what to do when `ip` is missing or we are not root.
fn preflight() {
    match Command::new("ip").arg("-V").output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "`ip -V` failed ({}): the netns fixture needs iproute2's `ip`",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => panic!(
            "the netns fixture needs iproute2's `ip` on PATH (apt-get install iproute2): {e}"
        ),
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1));
    if euid != Some("0") {
        panic!(
            "the netns fixture needs root (it creates network namespaces and veth pairs, \
             as CI does): run the test as root"
        );
    }
}

/// Whether process `pid` is in network namespace `name`.
fn inside(pid: u32, name: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    let ino = |p: &Path| std::fs::metadata(p).map(|m| m.ino()).ok();
    let ns = ino(&Path::new("/run/netns").join(name));
    ns.is_some() && ns == ino(Path::new(&format!("/proc/{pid}/ns/net")))
}

/// The slot's lock, when no one else holds it. The lock directory is made here: `/run` is
/// empty after a boot, and any caller may be the first.
fn try_lock(slot: u32) -> Option<File> {
    std::fs::create_dir_all(LOCK_DIR).unwrap_or_else(|e| panic!("creating {LOCK_DIR}: {e}"));
    let path = Path::new(LOCK_DIR).join(format!("netns-{slot}.lock"));
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    file.try_lock().ok().map(|()| file)
}

/// SIGKILLs every process inside namespace `name` and waits (briefly) until none is left.
fn kill_inside(name: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let pids = ip_output(&["netns", "pids", name]).unwrap_or_default();
        let pids: Vec<i32> = pids
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        if pids.is_empty() || Instant::now() > deadline {
            return;
        }
        for pid in pids {
            let pid = nix::unistd::Pid::from_raw(pid);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn ip_output(args: &[&str]) -> Result<String, String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn ip_cmd(args: &[&str]) -> Result<(), String> {
    ip_output(args).map(drop)
}

fn parse_cidr(cidr: &str) -> Option<(Ipv4Addr, u32)> {
    let (ip, len) = cidr.split_once('/')?;
    let ip: Ipv4Addr = ip.parse().ok()?;
    let len: u32 = len.parse().ok().filter(|l| *l <= 32)?;
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    Some((Ipv4Addr::from(u32::from(ip) & mask), len))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests;
