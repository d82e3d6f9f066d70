//! admissionregistration.k8s.io/v1 webhook configurations as a cert-manager install ships
//! them: applied with kubectl, defaulted, listed with upstream's columns, and refused with
//! upstream's messages. (Webhooks are stored only, never called.)

use kas_e2e::start_cluster;

const WEBHOOKS: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: cert-manager-webhook
  labels: {app: webhook}
webhooks:
  - name: webhook.cert-manager.io
    namespaceSelector:
      matchExpressions:
        - {key: cert-manager.io/disable-validation, operator: NotIn, values: ["true"]}
    rules:
      - apiGroups: ["cert-manager.io", "acme.cert-manager.io"]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["*/*"]
    admissionReviewVersions: ["v1"]
    matchPolicy: Equivalent
    timeoutSeconds: 30
    failurePolicy: Fail
    sideEffects: None
    clientConfig:
      service:
        name: cert-manager-webhook
        namespace: cert-manager
        path: /validate
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: mutating-webhook-configuration
webhooks:
  - admissionReviewVersions: ["v1"]
    clientConfig:
      service:
        name: webhook-service
        namespace: system
        path: /mutate-batch-tutorial-kubebuilder-io-v1-cronjob
    name: mcronjob.kb.io
    rules:
      - apiGroups: ["batch.tutorial.kubebuilder.io"]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["cronjobs"]
    sideEffects: None
"#;

const BAD: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: bad
webhooks:
  - name: webhook
    admissionReviewVersions: ["v1"]
    timeoutSeconds: 31
    clientConfig:
      url: http://example.com/validate
"#;

const POLICY: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: demo-policy.example.com
spec:
  matchConstraints:
    resourceRules:
      - apiGroups: ["apps"]
        apiVersions: ["v1"]
        operations: ["CREATE", "UPDATE"]
        resources: ["deployments"]
  validations:
    - expression: "object.spec.replicas <= 5"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: demo-binding-test.example.com
spec:
  policyName: demo-policy.example.com
  validationActions: [Deny]
"#;

#[test]
fn admission_policies_are_stored_and_listed() {
    let c = start_cluster(|_| {});
    let out = c.kubectl_stdin(&["apply"], POLICY);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = c.kubectl_ok(&["get", "validatingadmissionpolicies"]);
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"],
        "{table}"
    );
    assert_eq!(
        &lines[1][..3],
        ["demo-policy.example.com", "1", "<unset>"],
        "{table}"
    );
    let table = c.kubectl_ok(&["get", "validatingadmissionpolicybindings"]);
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["NAME", "POLICYNAME", "PARAMREF", "AGE"],
        "{table}"
    );
    assert_eq!(
        &lines[1][..3],
        [
            "demo-binding-test.example.com",
            "demo-policy.example.com",
            "<unset>"
        ],
        "{table}"
    );
    let p = c.kubectl_json(&[
        "get",
        "validatingadmissionpolicy",
        "demo-policy.example.com",
    ]);
    assert_eq!(p["spec"]["failurePolicy"], "Fail");
    assert_eq!(p["spec"]["matchConstraints"]["matchPolicy"], "Equivalent");
    assert_eq!(
        p["spec"]["matchConstraints"]["resourceRules"][0]["scope"],
        "*"
    );
    let bad = "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: bad}\nspec: {validationActions: [Deny, Block]}\n";
    let out = c.kubectl_stdin(&["create"], bad);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for expected in [
        "spec.policyName: Required value",
        "spec.validationActions[1]: Unsupported value: \"Block\": supported values: \"Audit\", \"Deny\", \"Warn\"",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in {stderr}"
        );
    }
}

#[test]
fn webhook_configurations_as_kubectl_applies_them() {
    let c = start_cluster(|_| {});
    let out = c.kubectl_stdin(&["apply"], WEBHOOKS);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let table = c.kubectl_ok(&["get", "validatingwebhookconfigurations"]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "WEBHOOKS", "AGE"], "{table}");
    let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..2], ["cert-manager-webhook", "1"], "{table}");

    let m = c.kubectl_json(&[
        "get",
        "mutatingwebhookconfiguration",
        "mutating-webhook-configuration",
        "-o",
        "json",
    ]);
    let h = &m["webhooks"][0];
    assert_eq!(h["failurePolicy"], "Fail");
    assert_eq!(h["matchPolicy"], "Equivalent");
    assert_eq!(h["reinvocationPolicy"], "Never");
    assert_eq!(h["timeoutSeconds"], 10);
    assert_eq!(h["namespaceSelector"], serde_json::json!({}));
    assert_eq!(h["objectSelector"], serde_json::json!({}));
    assert_eq!(h["rules"][0]["scope"], "*");
    assert_eq!(h["clientConfig"]["service"]["port"], 443);
    assert_eq!(m["metadata"]["generation"], 1);

    let out = c.kubectl_stdin(&["apply"], BAD);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for expected in [
        "The ValidatingWebhookConfiguration \"bad\" is invalid",
        "webhooks[0].name: Invalid value: \"webhook\": should be a domain with at least three segments separated by dots",
        "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun",
        "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
        "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in {stderr}"
        );
    }
}
