//! Upstream's kube-controller-manager and kube-scheduler, unmodified, against the three
//! roles, with fake kubelets played by the test (Ready nodes with their Leases, pods
//! reported Running, those whose command is `exit 0` Succeeded, pods marked for deletion
//! removed): the
//! namespace's `default` ServiceAccount and `kube-root-ca.crt`, a Deployment rolled out
//! and scheduled, each cascade mode leaving what upstream leaves, a namespace emptied and
//! removed, Jobs and CronJobs, EndpointSlices, legacy token Secrets and the certificate
//! signer. The binaries are not part of this tree: build them from a Kubernetes tree (see
//! the README) and run
//! `KAS_KUBE_CONTROLLER_MANAGER=... KAS_KUBE_SCHEDULER=... cargo test -p kas-e2e --test upstream_controllers -- --ignored`.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use http::Method;
use kas_e2e::{TestCluster, start_cluster};
use serde_json::{Value, json};

const JSON: [(&str, &str); 1] = [("content-type", "application/json")];
const MERGE: [(&str, &str); 1] = [("content-type", "application/merge-patch+json")];
const NODES: [&str; 2] = ["fake-node-0", "fake-node-1"];

/// A child process killed with the test.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(binary: &str, args: &[String], log: std::path::PathBuf) -> Process {
    let log = std::fs::File::create(log).unwrap();
    let child = Command::new(binary)
        .args(args)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("{binary}: {e}"));
    Process(child)
}

fn now(micros: bool) -> String {
    let t = kas_apimachinery::golang::time::Time::from_system_time(std::time::SystemTime::now());
    match micros {
        true => kas_apimachinery::golang::time::format_rfc3339_micro(t),
        false => kas_apimachinery::golang::time::format_rfc3339(t),
    }
}

async fn get(c: &TestCluster, path: &str) -> (u16, Value) {
    let a = c.send(Method::GET, path, &[], "").await;
    (a.status.as_u16(), a.json())
}

async fn post(c: &TestCluster, path: &str, obj: Value) -> Value {
    let a = c.send(Method::POST, path, &JSON, &obj.to_string()).await;
    assert_eq!(a.status, 201, "{path}: {}", a.text());
    a.json()
}

/// The kubelets' side of the nodes and their pods, one round.
async fn kubelets(c: &TestCluster) {
    for node in NODES {
        let t = now(false);
        let status = json!({"status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                "message": "fake", "lastHeartbeatTime": t, "lastTransitionTime": t}],
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}]}});
        let path = format!("/api/v1/nodes/{node}/status");
        c.send(Method::PATCH, &path, &MERGE, &status.to_string())
            .await;
        let lease =
            format!("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{node}");
        let renew = json!({"spec": {"holderIdentity": node, "leaseDurationSeconds": 40,
            "renewTime": now(true)}});
        let a = c
            .send(Method::PATCH, &lease, &MERGE, &renew.to_string())
            .await;
        if a.status == 404 {
            let mut created = renew.clone();
            created["metadata"] = json!({"name": node});
            let leases = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
            c.send(Method::POST, leases, &JSON, &created.to_string())
                .await;
        }
    }
    let (_, pods) = get(c, "/api/v1/pods").await;
    for pod in pods["items"].as_array().into_iter().flatten() {
        let node = pod["spec"]["nodeName"].as_str().unwrap_or("");
        if !NODES.contains(&node) {
            continue;
        }
        let meta = &pod["metadata"];
        let (ns, name) = (
            meta["namespace"].as_str().unwrap(),
            meta["name"].as_str().unwrap(),
        );
        let path = format!("/api/v1/namespaces/{ns}/pods/{name}");
        if meta["deletionTimestamp"].is_string() {
            let confirm = json!({"gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}});
            c.send(Method::DELETE, &path, &JSON, &confirm.to_string())
                .await;
            continue;
        }
        let t = now(false);
        // A container that runs `exit 0` completes; the others run until deleted.
        let completes = pod["spec"]["containers"][0]["command"]
            .as_array()
            .is_some_and(|cmd| cmd.iter().any(|a| a == "exit 0"));
        let containers = pod["spec"]["containers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let container_status = |ready: bool, state: Value| -> Vec<Value> {
            containers
                .iter()
                .map(|ct| {
                    json!({"name": ct["name"], "image": ct["image"], "imageID": "",
                        "ready": ready, "started": ready, "restartCount": 0, "state": state})
                })
                .collect()
        };
        let status = match pod["status"]["phase"].as_str() {
            Some("Running") if completes => {
                let done = json!({"terminated": {"exitCode": 0, "reason": "Completed",
                    "startedAt": t, "finishedAt": t}});
                json!({"phase": "Succeeded", "containerStatuses": container_status(false, done)})
            }
            Some("Running" | "Succeeded" | "Failed") => continue,
            _ => {
                let uid = meta["uid"].as_str().unwrap_or("").bytes();
                let host = uid.fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
                let ip = format!("10.244.{}.{}", (host >> 8) % 250, 2 + host % 250);
                let conditions: Vec<Value> =
                    ["PodScheduled", "Initialized", "ContainersReady", "Ready"]
                        .iter()
                        .map(|c| json!({"type": c, "status": "True", "lastTransitionTime": t}))
                        .collect();
                let running = json!({"running": {"startedAt": t}});
                json!({"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                    "hostIP": "127.0.0.1", "startTime": t, "conditions": conditions,
                    "containerStatuses": container_status(true, running)})
            }
        };
        let body = json!({"status": status}).to_string();
        c.send(Method::PATCH, &format!("{path}/status"), &MERGE, &body)
            .await;
    }
}

/// Plays the kubelets until `done` answers `None`, for at most `secs` seconds; fails with
/// the last reason it gave.
macro_rules! wait_for {
    ($c:expr, $secs:expr, $what:expr, $done:expr) => {{
        let deadline = Instant::now() + Duration::from_secs($secs);
        loop {
            kubelets($c).await;
            let why: Option<String> = $done;
            match why {
                None => break,
                Some(why) => assert!(Instant::now() < deadline, "{}: {why}", $what),
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }};
}

fn deployment(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}}})
}

/// The names of the objects of `plural` under `prefix` that carry `app=<app>`.
async fn named(c: &TestCluster, prefix: &str, app: &str) -> Vec<String> {
    let (_, list) = get(c, &format!("{prefix}?labelSelector=app%3D{app}")).await;
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs upstream's binaries in KAS_KUBE_CONTROLLER_MANAGER and KAS_KUBE_SCHEDULER"]
async fn upstreams_controllers_and_scheduler_run_the_cluster() {
    let kcm = std::env::var("KAS_KUBE_CONTROLLER_MANAGER").expect("KAS_KUBE_CONTROLLER_MANAGER");
    let scheduler = std::env::var("KAS_KUBE_SCHEDULER").expect("KAS_KUBE_SCHEDULER");
    // ServiceAccount admission on, as upstream's default: the controller manager creates
    // the `default` ServiceAccount its pods need.
    let c = start_cluster(|spec| spec.disabled_admission_plugins.clear());
    let pki = c.pki().clone();
    let kubeconfig = c.kubeconfig_path().display().to_string();
    let path = |p: &std::path::Path| p.display().to_string();
    let _kcm = spawn(
        &kcm,
        &[
            format!("--kubeconfig={kubeconfig}"),
            format!(
                "--service-account-private-key-file={}",
                path(&pki.service_account.key)
            ),
            format!("--root-ca-file={}", path(&pki.ca.cert)),
            format!("--cluster-signing-cert-file={}", path(&pki.ca.cert)),
            format!("--cluster-signing-key-file={}", path(&pki.ca.key)),
            "--use-service-account-credentials=true".to_owned(),
            "--controllers=*,bootstrapsigner,tokencleaner,-service-ca-cert-publisher".to_owned(),
            "--leader-elect=false".to_owned(),
            "--secure-port=0".to_owned(),
        ],
        c.state_dir().join("kube-controller-manager.log"),
    );
    let _scheduler = spawn(
        &scheduler,
        &[
            format!("--kubeconfig={kubeconfig}"),
            "--leader-elect=false".to_owned(),
            "--secure-port=0".to_owned(),
        ],
        c.state_dir().join("kube-scheduler.log"),
    );
    for node in NODES {
        post(
            &c,
            "/api/v1/nodes",
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node,
                "labels": {"kubernetes.io/hostname": node, "kubernetes.io/os": "linux"}}}),
        )
        .await;
    }

    // What each namespace gets: its `default` ServiceAccount and the root CA.
    post(
        &c,
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "work"}}),
    )
    .await;
    wait_for!(&c, 60, "default ServiceAccount and kube-root-ca.crt", {
        let (sa, _) = get(&c, "/api/v1/namespaces/work/serviceaccounts/default").await;
        let (ca, _) = get(&c, "/api/v1/namespaces/work/configmaps/kube-root-ca.crt").await;
        (sa != 200 || ca != 200).then(|| format!("serviceaccount {sa}, configmap {ca}"))
    });
    let apps = "/apis/apps/v1/namespaces/work";

    // A Deployment rolls out: a ReplicaSet, its pods bound to the fake nodes, available.
    post(&c, &format!("{apps}/deployments"), deployment("web", 2)).await;
    wait_for!(&c, 90, "rollout", {
        let (_, d) = get(&c, &format!("{apps}/deployments/web")).await;
        let (_, pods) = get(&c, "/api/v1/namespaces/work/pods?labelSelector=app%3Dweb").await;
        let bound = pods["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["spec"]["nodeName"].is_string())
            .count();
        (d["status"]["availableReplicas"] != 2 || bound != 2)
            .then(|| format!("{bound} bound, status {}", d["status"]))
    });

    // Orphan: the Deployment goes, its ReplicaSet stays without an owner.
    let a = c
        .send(
            Method::DELETE,
            &format!("{apps}/deployments/web?propagationPolicy=Orphan"),
            &[],
            "",
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    wait_for!(&c, 60, "orphaned ReplicaSet", {
        let (d, _) = get(&c, &format!("{apps}/deployments/web")).await;
        let (_, rs) = get(&c, &format!("{apps}/replicasets?labelSelector=app%3Dweb")).await;
        let owners = rs["items"][0]["metadata"]["ownerReferences"].clone();
        (d != 404 || rs["items"].as_array().map(Vec::len) != Some(1) || !owners.is_null())
            .then(|| format!("deployment {d}, replicasets {rs}"))
    });
    assert_eq!(
        named(&c, "/api/v1/namespaces/work/pods", "web").await.len(),
        2
    );

    // Background: the ReplicaSet goes at once, the collector deletes its pods.
    let rs = named(&c, &format!("{apps}/replicasets"), "web").await;
    let a = c
        .send(
            Method::DELETE,
            &format!("{apps}/replicasets/{}?propagationPolicy=Background", rs[0]),
            &[],
            "",
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    wait_for!(&c, 60, "pods of a deleted ReplicaSet", {
        let pods = named(&c, "/api/v1/namespaces/work/pods", "web").await;
        (!pods.is_empty()).then(|| format!("{pods:?}"))
    });

    // Foreground: the Deployment stays until its ReplicaSet and pods are gone.
    post(&c, &format!("{apps}/deployments"), deployment("fg", 2)).await;
    wait_for!(&c, 90, "second rollout", {
        let (_, d) = get(&c, &format!("{apps}/deployments/fg")).await;
        (d["status"]["availableReplicas"] != 2).then(|| format!("{}", d["status"]))
    });
    let a = c
        .send(
            Method::DELETE,
            &format!("{apps}/deployments/fg?propagationPolicy=Foreground"),
            &[],
            "",
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    assert_eq!(
        a.json()["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    wait_for!(&c, 90, "foreground deletion", {
        let (d, _) = get(&c, &format!("{apps}/deployments/fg")).await;
        let rs = named(&c, &format!("{apps}/replicasets"), "fg").await;
        let pods = named(&c, "/api/v1/namespaces/work/pods", "fg").await;
        (d != 404 || !rs.is_empty() || !pods.is_empty())
            .then(|| format!("deployment {d}, replicasets {rs:?}, pods {pods:?}"))
    });

    // A Job completes; a CronJob starts one within its minute.
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox",
                "command": ["/bin/sh", "-c", "exit 0"]}]}}}});
    post(&c, "/apis/batch/v1/namespaces/work/jobs", job).await;
    let cron = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "often"},
        "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}}}}});
    post(&c, "/apis/batch/v1/namespaces/work/cronjobs", cron).await;

    // A Service's EndpointSlice lists the ready pods it selects.
    post(&c, &format!("{apps}/deployments"), deployment("ep", 2)).await;
    post(
        &c,
        "/api/v1/namespaces/work/services",
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ep"},
            "spec": {"selector": {"app": "ep"}, "ports": [{"port": 80}]}}),
    )
    .await;

    // The token controller fills a legacy token Secret; the signer signs an approved CSR.
    post(
        &c,
        "/api/v1/namespaces/work/secrets",
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "legacy",
            "annotations": {"kubernetes.io/service-account.name": "default"}},
            "type": "kubernetes.io/service-account-token"}),
    )
    .await;
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "bob");
    let request = params.serialize_request(&key).unwrap().pem().unwrap();
    use base64::Engine as _;
    let csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
    post(
        &c,
        csrs,
        json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": "bob"}, "spec": {
                "request": base64::engine::general_purpose::STANDARD.encode(request),
                "signerName": "kubernetes.io/kube-apiserver-client",
                "usages": ["client auth"]}}),
    )
    .await;
    let approval = json!({"status": {"conditions": [{"type": "Approved", "status": "True",
        "reason": "Test", "message": "approved by the test"}]}});
    let a = c
        .send(
            Method::PATCH,
            &format!("{csrs}/bob/approval"),
            &MERGE,
            &approval.to_string(),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());

    wait_for!(&c, 90, "jobs, endpoints, tokens and certificates", {
        let (_, job) = get(&c, "/apis/batch/v1/namespaces/work/jobs/once").await;
        let complete = job["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Complete" && c["status"] == "True")
        });
        let (_, cron) = get(&c, "/apis/batch/v1/namespaces/work/cronjobs/often").await;
        let slices = "/apis/discovery.k8s.io/v1/namespaces/work/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dep";
        let (_, slices) = get(&c, slices).await;
        let endpoints = slices["items"][0]["endpoints"]
            .as_array()
            .map_or(0, Vec::len);
        let (_, secret) = get(&c, "/api/v1/namespaces/work/secrets/legacy").await;
        let (_, csr) = get(&c, &format!("{csrs}/bob")).await;
        let missing: Vec<&str> = [
            (!complete, "Job complete"),
            (
                cron["status"]["lastScheduleTime"].is_null(),
                "CronJob scheduled",
            ),
            (endpoints != 2, "two endpoints"),
            (secret["data"]["token"].is_null(), "token"),
            (csr["status"]["certificate"].is_null(), "certificate"),
        ]
        .into_iter()
        .filter_map(|(missing, what)| missing.then_some(what))
        .collect();
        (!missing.is_empty()).then(|| format!("missing {missing:?}"))
    });

    // A namespace deletion empties the namespace, then removes it.
    let a = c
        .send(Method::DELETE, "/api/v1/namespaces/work", &[], "")
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    wait_for!(&c, 90, "namespace deletion", {
        let (code, ns) = get(&c, "/api/v1/namespaces/work").await;
        (code != 404).then(|| format!("{}", ns["status"]))
    });
}
