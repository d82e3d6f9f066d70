//! batch/v1 Jobs and CronJobs, as kubectl drives them.

use kas_e2e::{header_and_row, start_cluster};
use serde_json::json;

#[test]
fn jobs_and_cron_jobs_as_kubectl_uses_them() {
    let c = start_cluster(|_| {});
    let resources = c.kubectl_ok(&["api-resources", "--api-group=batch"]);
    for expected in [
        vec!["cronjobs", "cj", "batch/v1", "true", "CronJob"],
        vec!["jobs", "batch/v1", "true", "Job"],
    ] {
        assert!(
            resources
                .lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == expected),
            "{resources}"
        );
    }

    // A Job: upstream's defaults and a selector generated from its uid.
    assert_eq!(
        c.kubectl_ok(&[
            "create",
            "job",
            "pi",
            "--image=perl",
            "--",
            "perl",
            "-e",
            "print 1"
        ]),
        "job.batch/pi created\n"
    );
    let j = c.kubectl_json(&["get", "job", "pi"]);
    let uid = j["metadata"]["uid"].as_str().expect("a uid").to_owned();
    let spec = &j["spec"];
    assert_eq!(
        spec["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    );
    assert_eq!(
        spec["template"]["metadata"]["labels"],
        json!({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi",
            "controller-uid": uid, "job-name": "pi"})
    );
    // A Job created without labels has its template's, generated ones included: upstream
    // defaults it again as it decodes it from etcd.
    assert_eq!(
        j["metadata"]["labels"],
        spec["template"]["metadata"]["labels"]
    );
    // One with labels of its own keeps them.
    c.kubectl_ok(&["create", "job", "own", "--image=perl"]);
    c.kubectl_ok(&["label", "job", "own", "team=a"]);
    let own = c.kubectl_json(&["get", "job", "own"]);
    assert_eq!(own["metadata"]["labels"]["team"], "a");
    let labeled = r#"{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"labeled","labels":{"team":"b"}},
        "spec":{"template":{"metadata":{"labels":{"app":"x"}},"spec":{"restartPolicy":"Never",
        "containers":[{"name":"c","image":"perl"}]}}}}"#;
    assert!(c.kubectl_stdin(&["create"], labeled).status.success());
    let labeled = c.kubectl_json(&["get", "job", "labeled"]);
    assert_eq!(labeled["metadata"]["labels"], json!({"team": "b"}));
    c.kubectl_ok(&["delete", "job", "own", "labeled"]);
    assert_eq!(spec["completions"], 1);
    assert_eq!(spec["parallelism"], 1);
    assert_eq!(spec["backoffLimit"], 6);
    assert_eq!(spec["completionMode"], "NonIndexed");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["manualSelector"], false);
    assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Never");
    assert_eq!(j["metadata"]["generation"], 1);

    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "jobs"]));
    assert_eq!(header, ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]);
    // The empty Duration cell is not split out.
    assert_eq!(row[..3], ["pi", "Running", "0/1"]);
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "jobs", "-o", "wide"]));
    assert_eq!(header[5..], ["CONTAINERS", "IMAGES", "SELECTOR"]);
    assert_eq!(
        row[row.len() - 3..],
        [
            "pi".to_owned(),
            "perl".to_owned(),
            format!("batch.kubernetes.io/controller-uid={uid}")
        ]
    );

    // The template of a job is immutable.
    let err = c.kubectl_fails(&[
        "patch",
        "job",
        "pi",
        "--type=merge",
        "-p",
        r#"{"spec":{"template":{"spec":{"hostname":"h"}}}}"#,
    ]);
    assert!(
        err.contains("spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable"),
        "{err}"
    );

    // A CronJob.
    assert_eq!(
        c.kubectl_ok(&[
            "create",
            "cronjob",
            "hello",
            "--image=busybox",
            "--schedule=*/1 * * * *"
        ]),
        "cronjob.batch/hello created\n"
    );
    let cj = c.kubectl_json(&["get", "cj", "hello"]);
    assert_eq!(cj["spec"]["concurrencyPolicy"], "Allow");
    assert_eq!(cj["spec"]["successfulJobsHistoryLimit"], 3);
    assert_eq!(cj["spec"]["failedJobsHistoryLimit"], 1);
    assert_eq!(cj["spec"]["suspend"], false);
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "cronjobs"]));
    assert_eq!(
        header,
        [
            "NAME",
            "SCHEDULE",
            "TIMEZONE",
            "SUSPEND",
            "ACTIVE",
            "LAST SCHEDULE",
            "AGE"
        ]
    );
    assert_eq!(
        row[..6],
        ["hello", "*/1 * * * *", "<none>", "False", "0", "<none>"]
    );

    // A Job made from the CronJob by hand, as `kubectl create job --from` makes it.
    assert_eq!(
        c.kubectl_ok(&["create", "job", "manual", "--from=cronjob/hello"]),
        "job.batch/manual created\n"
    );
    let manual = c.kubectl_json(&["get", "job", "manual"]);
    assert_eq!(
        manual["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"],
        "manual"
    );
    assert_eq!(manual["metadata"]["ownerReferences"][0]["kind"], "CronJob");

    // A bad schedule is refused with robfig/cron's message.
    let err = c.kubectl_fails(&[
        "create",
        "cronjob",
        "bad",
        "--image=busybox",
        "--schedule=x",
    ]);
    assert!(
        err.contains(
            "spec.schedule: Invalid value: \"x\": expected exactly 5 fields, found 1: [x]"
        ),
        "{err}"
    );
    let manifest = r#"{"apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "tz"},
        "spec": {"schedule": "0 * * * *", "timeZone": "Mars/Olympus",
            "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox"}]}}}}}}"#;
    let out = c.kubectl_stdin(&["create"], manifest);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "spec.timeZone: Invalid value: \"Mars/Olympus\": unknown time zone Mars/Olympus"
        ),
        "{err}"
    );
}
