//! Upstream's `reader_test.go`, and the errors of `LoadPolicyFromBytes` and
//! `LoadPolicyFromFile` in upstream's words.

use std::io::Write as _;

use super::*;
use crate::Error;

const POLICY_V1: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  - level: None
    nonResourceURLs:
      - /healthz*
      - /version
  - level: RequestResponse
    users: ["tim"]
    userGroups: ["testers", "developers"]
    verbs: ["patch", "delete", "create"]
    resources:
      - group: ""
      - group: "rbac.authorization.k8s.io"
        resources: ["clusterroles", "clusterrolebindings"]
    namespaces: ["default", "kube-system"]
  - level: Metadata
"#;

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn expected_policy() -> Policy {
    Policy {
        rules: vec![
            PolicyRule {
                level: "None".into(),
                non_resource_urls: strings(&["/healthz*", "/version"]),
                ..PolicyRule::default()
            },
            PolicyRule {
                level: "RequestResponse".into(),
                users: strings(&["tim"]),
                user_groups: strings(&["testers", "developers"]),
                verbs: strings(&["patch", "delete", "create"]),
                resources: vec![
                    GroupResources::default(),
                    GroupResources {
                        group: "rbac.authorization.k8s.io".into(),
                        resources: strings(&["clusterroles", "clusterrolebindings"]),
                        ..GroupResources::default()
                    },
                ],
                namespaces: strings(&["default", "kube-system"]),
                ..PolicyRule::default()
            },
            PolicyRule {
                level: "Metadata".into(),
                ..PolicyRule::default()
            },
        ],
        ..Policy::default()
    }
}

fn write_policy(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

fn err(text: &str) -> String {
    load_policy_from_bytes(text.as_bytes())
        .unwrap_err()
        .to_string()
}

#[test]
fn parses_v1_from_a_file() {
    let f = write_policy(POLICY_V1);
    assert_eq!(load_policy_from_file(f.path()).unwrap(), expected_policy());
}

#[test]
fn parses_json() {
    let json = r#"{"apiVersion":"audit.k8s.io/v1","kind":"Policy","omitStages":["RequestReceived"],
        "omitManagedFields":true,"rules":[{"level":"Request","omitManagedFields":false,
        "omitStages":["Panic"],"resources":[{"group":"apps","resources":["deployments"],
        "resourceNames":["web"]}]}]}"#;
    let policy = load_policy_from_bytes(json.as_bytes()).unwrap();
    assert_eq!(
        policy,
        Policy {
            omit_stages: strings(&["RequestReceived"]),
            omit_managed_fields: true,
            rules: vec![PolicyRule {
                level: "Request".into(),
                omit_managed_fields: Some(false),
                omit_stages: strings(&["Panic"]),
                resources: vec![GroupResources {
                    group: "apps".into(),
                    resources: strings(&["deployments"]),
                    resource_names: strings(&["web"]),
                }],
                ..PolicyRule::default()
            }],
        }
    );
}

#[test]
fn kind_may_be_left_out_but_not_the_version() {
    let policy =
        load_policy_from_bytes(b"apiVersion: audit.k8s.io/v1\nrules:\n- level: Metadata\n");
    assert_eq!(policy.unwrap().rules.len(), 1);
    let no_version_or_kind = POLICY_V1.replace("apiVersion: audit.k8s.io/v1\nkind: Policy\n", "");
    assert_eq!(
        err(&no_version_or_kind),
        "unknown group version field audit.k8s.io/__internal, Kind=Policy in policy"
    );
    assert_eq!(
        err("kind: Policy\nrules:\n- level: Metadata\n"),
        "unknown group version field audit.k8s.io/__internal, Kind=Policy in policy"
    );
}

#[test]
fn only_v1_is_loaded() {
    for version in ["v1beta1", "v1alpha1"] {
        assert_eq!(
            err(&POLICY_V1.replace("audit.k8s.io/v1", &format!("audit.k8s.io/{version}"))),
            format!(
                "failed decoding: no kind \"Policy\" is registered for version \"audit.k8s.io/{version}\" in scheme \"k8s.io/apiserver/pkg/audit/scheme.go:30\""
            )
        );
    }
    assert_eq!(
        err("apiVersion: v1\nkind: Policy\n"),
        "failed decoding: no kind \"Policy\" is registered for version \"v1\" in scheme \"k8s.io/apiserver/pkg/audit/scheme.go:30\""
    );
    assert_eq!(
        err("apiVersion: audit.k8s.io/v1\nkind: Rules\n"),
        "failed decoding: no kind \"Rules\" is registered for version \"audit.k8s.io/v1\" in scheme \"k8s.io/apiserver/pkg/audit/scheme.go:30\""
    );
    assert_eq!(
        err("apiVersion: audit.k8s.io/v1\nkind: Event\n"),
        "failed decoding: converting (v1.Event) to (audit.Policy): unknown conversion"
    );
    assert_eq!(
        err("apiVersion: example.com/\nkind: Policy\n"),
        "failed decoding: Object 'apiVersion' is missing in 'apiVersion: example.com/\nkind: Policy\n'"
    );
    assert_eq!(
        err("apiVersion: a/b/c\nkind: Policy\n"),
        "failed decoding: unexpected GroupVersion string: a/b/c"
    );
}

#[test]
fn unknown_and_repeated_fields_are_accepted() {
    // Upstream's policyWithUnknownField: `verbs` indented into the resources.
    let policy = load_policy_from_bytes(
        br#"
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  resources:
  - group: coordination.k8s.io
    resources:
    - "leases"
    verbs: ["watch", "get", "list"]
"#,
    )
    .unwrap();
    assert_eq!(policy.rules[0].resources[0].resources, ["leases"]);
    assert!(policy.rules[0].verbs.is_empty());
    // The last of a repeated key stands; keys match case-sensitively.
    let policy = load_policy_from_bytes(
        b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  level: Request\n  Verbs: [get]\n",
    )
    .unwrap();
    assert_eq!(policy.rules[0].level, "Request");
    assert!(policy.rules[0].verbs.is_empty());
    assert_eq!(
        err("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- Level: None\n"),
        "rules[0].level: Required value"
    );
}

#[test]
fn unknown_fields_as_strict_decoding_names_them() {
    let doc = serde_json::json!({
        "apiVersion": "audit.k8s.io/v1",
        "extra": 1,
        "rules": [{"level": "None"}, {"level": "None", "Verbs": [], "resources": [{"verbs": []}]}],
    });
    let read = super::decode::read_policy(&doc);
    assert_eq!(read.type_error, None);
    assert_eq!(
        read.unknown,
        [
            r#"unknown field "extra""#,
            r#"unknown field "rules[1].Verbs""#,
            r#"unknown field "rules[1].resources[0].verbs""#,
        ]
    );
}

#[test]
fn values_of_the_wrong_type() {
    let with = |rules: &str| {
        err(&format!(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\n{rules}"
        ))
    };
    let cases = [
        (
            "rules: all\n",
            "Policy.rules of type []v1.PolicyRule",
            "string",
        ),
        (
            "rules: [5]\n",
            "Policy.rules of type v1.PolicyRule",
            "number",
        ),
        (
            "rules:\n- level: [None]\n",
            "PolicyRule.rules.level of type v1.Level",
            "array",
        ),
        (
            "rules:\n- level: None\n  users: [1]\n",
            "PolicyRule.rules.users of type string",
            "number",
        ),
        (
            "rules:\n- level: None\n  verbs: {get: true}\n",
            "PolicyRule.rules.verbs of type []string",
            "object",
        ),
        (
            "rules:\n- level: None\n  resources: [pods]\n",
            "PolicyRule.rules.resources of type v1.GroupResources",
            "string",
        ),
        (
            "rules:\n- level: None\n  resources:\n  - group: true\n",
            "GroupResources.rules.resources.group of type string",
            "bool",
        ),
        (
            "rules:\n- level: None\n  omitStages: [1]\n",
            "PolicyRule.rules.omitStages of type v1.Stage",
            "number",
        ),
        (
            "rules:\n- level: None\n  omitManagedFields: \"true\"\n",
            "PolicyRule.rules.omitManagedFields of type bool",
            "string",
        ),
        (
            "omitManagedFields: 1\n",
            "Policy.omitManagedFields of type bool",
            "number",
        ),
        (
            "metadata: x\n",
            "Policy.metadata of type v1.ObjectMeta",
            "string",
        ),
    ];
    for (doc, field, value) in cases {
        assert_eq!(
            with(doc),
            format!("failed decoding: json: cannot unmarshal {value} into Go struct field {field}"),
            "{doc}"
        );
    }
    // Null leaves a field unset.
    let policy = load_policy_from_bytes(
        b"apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: null\nrules:\n- level: Metadata\n  users: null\n  omitManagedFields: null\n",
    )
    .unwrap();
    assert_eq!(policy.rules[0].omit_managed_fields, None);
}

#[test]
fn syntax_errors() {
    assert!(
        err("apiVersion: audit.k8s.io/v1\nrules: [\n")
            .starts_with("failed decoding: error converting YAML to JSON: yaml: ")
    );
    assert!(
        err(r#"{"apiVersion": "audit.k8s.io/v1", "rules": }"#).starts_with(
            "failed decoding: couldn't get version/kind; json parse error: invalid character '}'"
        )
    );
}

#[test]
fn invalid_policies_are_refused() {
    assert_eq!(
        err(
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n  omitStages: [Never]\n"
        ),
        r#"[rules[0].level: Unsupported value: "Loud": supported values: "None", "Metadata", "Request", "RequestResponse", rules[0].omitStages[0]: Invalid value: "Never": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic]"#
    );
    assert_eq!(
        err("apiVersion: audit.k8s.io/v1\nkind: Policy"),
        "loaded illegal policy with 0 rules"
    );
    assert_eq!(
        err("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n"),
        "loaded illegal policy with 0 rules"
    );
}

#[test]
fn file_errors_name_the_file() {
    let f = write_policy("apiVersion: audit.k8s.io/v1\nkind: Policy");
    let path = f.path().display().to_string();
    assert_eq!(
        load_policy_from_file(f.path()).unwrap_err().to_string(),
        format!("loaded illegal policy with 0 rules: from file {path}")
    );
    let empty = write_policy("");
    assert_eq!(
        load_policy_from_file(empty.path()).unwrap_err().to_string(),
        format!(
            "unknown group version field audit.k8s.io/__internal, Kind=Policy in policy: from file {}",
            empty.path().display()
        )
    );
    let missing = std::path::Path::new("/nonexistent/audit-policy.yaml");
    assert_eq!(
        load_policy_from_file(missing).unwrap_err().to_string(),
        r#"failed to read file path "/nonexistent/audit-policy.yaml": open /nonexistent/audit-policy.yaml: no such file or directory"#
    );
    assert!(matches!(
        load_policy_from_file(std::path::Path::new("")),
        Err(Error::FilePathNotSpecified)
    ));
}
