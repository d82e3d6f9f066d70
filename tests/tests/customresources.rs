//! CustomResourceDefinitions and custom resources through the aggregator, as kubectl
//! drives them: the CRD controllers' conditions, discovery merged at core, printer
//! columns, the scale and status subresources, merge patch and server-side apply,
//! watches, typed list items, and the deletion of a CRD's objects with it.

use std::time::{Duration, Instant};

use kas_e2e::{header_and_row, start_cluster};
use serde_json::Value;

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    listKind: WidgetList
    shortNames: [wd]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "!has(self.replicas) || self.replicas <= 10"
              message: at most 10 replicas
            - rule: "!has(oldSelf.color) || has(self.color)"
              message: color cannot be unset
            properties:
              replicas: {type: integer, minimum: 0}
              color: {type: string}
              size: {type: string, default: small}
          status:
            type: object
            properties:
              replicas: {type: integer}
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Color
      type: string
      jsonPath: .spec.color
      priority: 1
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
"#;

const WIDGET: &str = r#"
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
spec:
  replicas: 2
  color: blue
"#;

fn condition<'a>(crd: &'a Value, type_: &str) -> &'a Value {
    crd["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

/// Creates `manifest`, retrying until it succeeds, failing once `limit` has passed since
/// `since` (the CRD's creation: how soon a new CRD is usable).
fn create_within(c: &kas_e2e::TestCluster, manifest: &str, since: Instant, limit: Duration) {
    loop {
        let out = c.kubectl_stdin(&["create"], manifest);
        if out.status.success() {
            return;
        }
        assert!(
            since.elapsed() < limit,
            "not usable after {limit:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn ok(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_crd_is_established_served_and_deleted_with_its_objects() {
    let c = start_cluster(|_| {});
    let created = Instant::now();
    assert_eq!(
        ok(c.kubectl_stdin(&["apply"], CRD)),
        "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created\n"
    );
    // Usable through the aggregator (discovery merged at core) within a second.
    create_within(&c, WIDGET, created, Duration::from_secs(1));

    let crd = c.kubectl_json(&["get", "crd", "widgets.example.com"]);
    let names = condition(&crd, "NamesAccepted");
    assert_eq!(
        (&names["status"], &names["reason"], &names["message"]),
        (
            &Value::from("True"),
            &Value::from("NoConflicts"),
            &Value::from("no conflicts found")
        )
    );
    let established = condition(&crd, "Established");
    assert_eq!(
        (&established["status"], &established["reason"]),
        (&Value::from("True"), &Value::from("InitialNamesAccepted"))
    );
    assert_eq!(crd["status"]["acceptedNames"]["shortNames"][0], "wd");
    assert_eq!(crd["status"]["storedVersions"], serde_json::json!(["v1"]));

    let resources = c.kubectl_ok(&["api-resources", "--api-group=example.com"]);
    assert!(
        resources
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["widgets", "wd", "example.com/v1", "true", "Widget"]),
        "{resources}"
    );

    // Printer columns; wide adds the priority-1 one.
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "wd"]));
    assert_eq!(header, ["NAME", "REPLICAS", "AGE"]);
    assert_eq!(&row[..2], ["w1", "2"]);
    let (header, row) = header_and_row(&c.kubectl_ok(&["get", "widgets", "-o", "wide"]));
    assert_eq!(header, ["NAME", "REPLICAS", "COLOR", "AGE"]);
    assert_eq!(&row[..3], ["w1", "2", "blue"]);

    // Scale, merge patch, and the status subresource keeping status out of the main
    // resource.
    assert_eq!(
        c.kubectl_ok(&["scale", "widget", "w1", "--replicas", "5"]),
        "widget.example.com/w1 scaled\n"
    );
    c.kubectl_ok(&[
        "patch",
        "widget",
        "w1",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"color":"red"},"status":{"replicas":9}}"#,
    ]);
    let w = c.kubectl_json(&["get", "widget", "w1"]);
    assert_eq!(w["spec"]["replicas"], 5);
    assert_eq!(w["spec"]["color"], "red");
    assert!(w.get("status").is_none(), "{w}");
    assert_eq!(w["metadata"]["generation"], 3);
    c.kubectl_ok(&[
        "patch",
        "widget",
        "w1",
        "--subresource",
        "status",
        "--type",
        "merge",
        "-p",
        r#"{"status":{"replicas":5}}"#,
    ]);
    let raw = |path: &str| -> Value {
        serde_json::from_str(&c.kubectl_ok(&["get", "--raw", path])).expect("JSON")
    };
    let scale = raw("/apis/example.com/v1/namespaces/default/widgets/w1/scale");
    assert_eq!(
        (&scale["spec"]["replicas"], &scale["status"]["replicas"]),
        (&Value::from(5), &Value::from(5))
    );

    // Strategic merge patch is refused as upstream refuses it for custom resources.
    let err = c.kubectl_fails(&["patch", "widget", "w1", "-p", r#"{"spec":{"color":"x"}}"#]);
    assert!(
        err.contains(
            "application/strategic-merge-patch+json is not supported by example.com/v1, Kind=Widget"
        ),
        "{err}"
    );

    // Server-side apply: managed fields and conflicts.
    let applied = WIDGET.replace("w1", "w2");
    assert_eq!(
        ok(c.kubectl_stdin(&["apply", "--server-side"], &applied)),
        "widget.example.com/w2 serverside-applied\n"
    );
    let conflict = c.kubectl_stdin(
        &["apply", "--server-side", "--field-manager", "other"],
        &applied.replace("replicas: 2", "replicas: 3"),
    );
    assert!(!conflict.status.success());
    let err = String::from_utf8_lossy(&conflict.stderr);
    assert!(
        err.contains(r#"Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas"#),
        "{err}"
    );
    let w2 = c.kubectl_json(&["get", "widget", "w2", "--show-managed-fields"]);
    assert_eq!(w2["metadata"]["managedFields"][0]["manager"], "kubectl");
    assert_eq!(w2["metadata"]["managedFields"][0]["operation"], "Apply");

    // A list's items carry their type, as upstream's unstructured lists do.
    let list = raw("/apis/example.com/v1/widgets");
    assert_eq!(list["kind"], "WidgetList");
    assert_eq!(list["items"][0]["kind"], "Widget");
    assert_eq!(list["items"][0]["apiVersion"], "example.com/v1");

    // Deleting the CRD deletes its objects, then the CRD, and its group leaves discovery.
    assert_eq!(
        c.kubectl_ok(&["delete", "crd", "widgets.example.com"]),
        "customresourcedefinition.apiextensions.k8s.io \"widgets.example.com\" deleted\n"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = c.kubectl(&["get", "crd", "widgets.example.com"]);
        if !out.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "the CRD stayed");
        std::thread::sleep(Duration::from_millis(50));
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    while c.kubectl_ok(&["api-versions"]).contains("example.com/v1") {
        assert!(
            Instant::now() < deadline,
            "example.com/v1 stayed in discovery"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Created again, it has no objects left over.
    ok(c.kubectl_stdin(&["apply"], CRD));
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let out = c.kubectl(&["get", "widgets", "-A", "-o", "name"]);
        if out.status.success() {
            assert_eq!(String::from_utf8_lossy(&out.stdout), "");
            break;
        }
        assert!(Instant::now() < deadline, "widgets not served again");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn names_taken_by_another_crd_are_not_accepted() {
    let c = start_cluster(|_| {});
    ok(c.kubectl_stdin(&["apply"], CRD));
    let clash = CRD
        .replace("widgets.example.com", "gadgets.example.com")
        .replace("plural: widgets", "plural: gadgets")
        .replace("singular: widget", "singular: gadget")
        .replace("shortNames: [wd]", "shortNames: [gd]");
    ok(c.kubectl_stdin(&["apply"], &clash));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let crd = c.kubectl_json(&["get", "crd", "gadgets.example.com"]);
        let names = condition(&crd, "NamesAccepted");
        if names["status"] == "False" {
            assert_eq!(names["reason"], "ListKindConflict");
            assert_eq!(names["message"], "\"WidgetList\" is already in use");
            let established = condition(&crd, "Established");
            assert_eq!(
                (&established["status"], &established["reason"]),
                (&Value::from("False"), &Value::from("NotAccepted"))
            );
            assert_eq!(crd["status"]["acceptedNames"]["plural"], "gadgets");
            break;
        }
        assert!(Instant::now() < deadline, "{crd}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Not served: its names are not accepted.
    let err = c.kubectl_fails(&["get", "gadgets"]);
    assert!(
        err.contains("the server doesn't have a resource type \"gadgets\""),
        "{err}"
    );
}

#[test]
fn invalid_crds_are_refused_and_protected_groups_need_approval() {
    let c = start_cluster(|_| {});
    let invalid = CRD.replace("type: integer, minimum: 0", "type: int");
    let out = c.kubectl_stdin(&["apply"], &invalid);
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "The CustomResourceDefinition \"widgets.example.com\" is invalid: \
         spec.validation.openAPIV3Schema.properties[spec].properties[replicas].type: \
         Unsupported value: \"int\": supported values: \"array\", \"boolean\", \"integer\", \
         \"number\", \"object\", \"string\""
    );
    let misnamed = CRD.replace("name: widgets.example.com", "name: widgets.example.org");
    let err = c.kubectl_stdin(&["apply"], &misnamed);
    assert!(
        String::from_utf8_lossy(&err.stderr)
            .contains("metadata.name: Invalid value: \"widgets.example.org\": must be spec.names.plural+\".\"+spec.group"),
        "{}",
        String::from_utf8_lossy(&err.stderr)
    );

    // A group under k8s.io needs the approval annotation; one that says it is unapproved
    // is served, and its condition says so.
    let protected = CRD
        .replace("widgets.example.com", "widgets.example.k8s.io")
        .replace("group: example.com", "group: example.k8s.io");
    let err = c.kubectl_stdin(&["apply"], &protected);
    assert!(
        String::from_utf8_lossy(&err.stderr).contains(
            "metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation"
        ),
        "{}",
        String::from_utf8_lossy(&err.stderr)
    );
    let protected = protected.replace(
        "  name: widgets.example.k8s.io",
        "  name: widgets.example.k8s.io\n  annotations:\n    api-approved.kubernetes.io: unapproved, testing only",
    );
    ok(c.kubectl_stdin(&["apply"], &protected));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let crd = c.kubectl_json(&["get", "crd", "widgets.example.k8s.io"]);
        let approval = condition(&crd, "KubernetesAPIApprovalPolicyConformant");
        if !approval.is_null() {
            assert_eq!(approval["status"], "False");
            assert_eq!(approval["reason"], "UnapprovedAnnotation");
            assert_eq!(
                approval["message"],
                "not approved: \"unapproved, testing only\""
            );
            break;
        }
        assert!(Instant::now() < deadline, "{crd}");
        std::thread::sleep(Duration::from_millis(50));
    }

    // kubectl explain reads the merged OpenAPI documents, where a custom resource's
    // definition is its CRD's schema, nested objects inline, as upstream publishes it.
    let described = CRD
        .replace(
            "          spec:\n            type: object\n",
            "          spec:\n            type: object\n            description: The desired state of the widget.\n",
        )
        .replace(
            "color: {type: string}",
            "color: {type: string, enum: [red, blue], description: The colour of the widget.}",
        )
        .replace(
            "replicas: {type: integer, minimum: 0}",
            "replicas: {type: integer, format: int32, minimum: 0, description: How many widgets run.}",
        );
    ok(c.kubectl_stdin(&["apply"], &described));
    let deadline = Instant::now() + Duration::from_secs(5);
    let text = loop {
        // Widgets of example.k8s.io exist too: kubectl picks example.com's by discovery's
        // group order, read fresh each time (its cache, filled before example.com's widgets
        // were served, would keep resolving the name to example.k8s.io's).
        let out = explain_fresh(&c, &["widgets.spec"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success()
            && text.contains("replicas\t<integer>")
            && text.contains("GROUP:      example.com\n")
        {
            break text;
        }
        assert!(Instant::now() < deadline, "{text}");
        std::thread::sleep(Duration::from_millis(100));
    };
    for expected in [
        "GROUP:      example.com\nKIND:       Widget\nVERSION:    v1\n",
        "FIELD: spec <Object>\n",
        "DESCRIPTION:\n    The desired state of the widget.\n",
        "FIELDS:\n  color\t<string>\n  enum: red, blue\n    The colour of the widget.\n",
        "  replicas\t<integer>\n    How many widgets run.\n",
        "  size\t<string>\n    <no description>\n",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
    // The same from /openapi/v2 (protobuf), where kubectl reads it in its older layout.
    let v2 = ok(explain_fresh(
        &c,
        &["--output", "plaintext-openapiv2", "widgets.spec"],
    ));
    for expected in [
        "RESOURCE: spec <Object>\n",
        "   color\t<string>\n     The colour of the widget.\n",
        "   replicas\t<integer>\n     How many widgets run.\n",
    ] {
        assert!(v2.contains(expected), "missing {expected:?} in\n{v2}");
    }
    // The root: metadata refers to ObjectMeta with upstream's description.
    let root = ok(explain_fresh(&c, &["widgets"]));
    assert!(
        root.contains("  metadata\t<ObjectMeta>\n    Standard object's metadata."),
        "{root}"
    );
}

/// `kubectl explain args` with discovery read afresh.
fn explain_fresh(c: &kas_e2e::TestCluster, args: &[&str]) -> std::process::Output {
    let fresh = tempfile::tempdir().unwrap();
    let mut all = vec!["explain"];
    all.extend(args);
    all.extend(["--cache-dir", fresh.path().to_str().unwrap()]);
    c.kubectl(&all)
}

#[test]
fn the_schema_prunes_defaults_and_validates() {
    let c = start_cluster(|_| {});
    ok(c.kubectl_stdin(&["apply"], CRD));
    let widget = |name: &str, spec: &str| {
        format!(
            "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: {name}\nspec:\n{spec}"
        )
    };
    // kubectl validates strictly by default: an unknown field is refused.
    let deadline = Instant::now() + Duration::from_secs(2);
    let refused = loop {
        let out = c.kubectl_stdin(&["create"], &widget("w1", "  replicas: 1\n  bogus: 1\n"));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if !err.contains("the server could not find") && !err.contains("no matches for kind") {
            break err;
        }
        assert!(Instant::now() < deadline, "{err}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        refused.contains(
            "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: unknown field \"spec.bogus\""
        ),
        "{refused}"
    );
    // Warned and pruned under Warn; defaults filled.
    let out = c.kubectl_stdin(
        &["create", "--validate=warn"],
        &widget("w1", "  replicas: 1\n  bogus: 1\n"),
    );
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Warning: unknown field \"spec.bogus\""),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let w = c.kubectl_json(&["get", "widget", "w1"]);
    assert_eq!(
        w["spec"],
        serde_json::json!({"replicas": 1, "size": "small"})
    );

    // OpenAPI validation with upstream's messages.
    let out = c.kubectl_stdin(&["create"], &widget("w2", "  replicas: -1\n  color: 5\n"));
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "The Widget \"w2\" is invalid: \n\
         * spec.color: Invalid value: \"integer\": spec.color in body must be of type string: \"integer\"\n\
         * spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0\n\
         * .spec.replicas: Invalid value: -1: should be a non-negative integer\n\
         * <nil>: Invalid value: \"null\": some validation rules were not checked because the \
         object was invalid; correct the existing errors to complete validation"
    );

    // CEL rules, transition rules with oldSelf included.
    let out = c.kubectl_stdin(&["create"], &widget("w3", "  replicas: 11\n"));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "The Widget \"w3\" is invalid: spec: Invalid value: \"object\": at most 10 replicas"
    );
    ok(c.kubectl_stdin(&["create"], &widget("w3", "  replicas: 1\n  color: red\n")));
    let out = c.kubectl(&[
        "patch",
        "widget",
        "w3",
        "--type",
        "json",
        "-p",
        r#"[{"op":"remove","path":"/spec/color"}]"#,
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "The Widget \"w3\" is invalid: spec: Invalid value: \"object\": color cannot be unset"
    );
    // A rule that does not compile keeps the CRD out.
    let broken = CRD
        .replace("widgets.example.com", "gadgets.example.com")
        .replace("plural: widgets", "plural: gadgets")
        .replace("singular: widget", "singular: gadget")
        .replace("kind: Widget", "kind: Gadget")
        .replace("listKind: WidgetList", "listKind: GadgetList")
        .replace("self.replicas <= 10", "self.replicas <= 'ten'");
    let out = c.kubectl_stdin(&["create"], &broken);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value:")
            && err.contains("compilation failed"),
        "{err}"
    );
}

#[test]
fn a_changed_schema_defaults_and_prunes_objects_stored_before_it() {
    let c = start_cluster(|_| {});
    ok(c.kubectl_stdin(&["apply"], CRD));
    create_within(&c, WIDGET, Instant::now(), Duration::from_secs(5));
    let w = c.kubectl_json(&["get", "widget", "w1"]);
    assert_eq!(
        w["spec"],
        serde_json::json!({"replicas": 2, "color": "blue", "size": "small"})
    );
    // The schema gains a defaulted field and loses `color`: reads show the stored object
    // as upstream's storage decoder does, defaulted and pruned, without a write.
    let changed = CRD
        .replace(
            "size: {type: string, default: small}",
            "size: {type: string, default: small}\n              shape: {type: string, default: round}",
        )
        .replace("              color: {type: string}\n", "")
        .replace("!has(oldSelf.color) || has(self.color)", "true")
        .replace("jsonPath: .spec.color", "jsonPath: .spec.size");
    ok(c.kubectl_stdin(&["apply"], &changed));
    let expected = serde_json::json!({"replicas": 2, "size": "small", "shape": "round"});
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let w = c.kubectl_json(&["get", "widget", "w1"]);
        if w["spec"] == expected {
            let rv = w["metadata"]["resourceVersion"].clone();
            let listed = c.kubectl_json(&["get", "widgets"]);
            assert_eq!(listed["items"][0]["spec"], expected);
            assert_eq!(listed["items"][0]["metadata"]["resourceVersion"], rv);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not read with the new schema: {w}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn two_extensions_replicas_agree_and_a_dead_one_degrades_only_custom_groups() {
    use kas_e2e::Role;
    let mut c = start_cluster(|spec| spec.extensions_replicas = 2);
    let created = Instant::now();
    ok(c.kubectl_stdin(&["apply"], CRD));
    create_within(&c, WIDGET, created, Duration::from_secs(1));
    // Both replicas ran the controllers: one condition of each type, established.
    let crd = c.kubectl_json(&["get", "crd", "widgets.example.com"]);
    let types: Vec<&str> = crd["status"]["conditions"]
        .as_array()
        .expect("conditions")
        .iter()
        .filter_map(|c| c["type"].as_str())
        .collect();
    assert_eq!(types, ["NamesAccepted", "Established"]);
    // Requests spread over both replicas find every object.
    for i in 0..10 {
        let name = format!("w-{i}");
        ok(c.kubectl_stdin(
            &["create"],
            &WIDGET.replace("name: w1", &format!("name: {name}")),
        ));
        assert_eq!(
            c.kubectl_json(&["get", "widget", &name])["metadata"]["name"],
            name.as_str()
        );
    }
    assert_eq!(
        c.kubectl_ok(&["get", "widgets", "-o", "name"])
            .lines()
            .count(),
        11
    );

    // One replica gone: the other serves.
    c.kill(Role::Extensions, 0, nix::sys::signal::Signal::SIGKILL)
        .expect("kill");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = c.kubectl(&["get", "widgets", "-o", "name"]);
        if out.status.success() && String::from_utf8_lossy(&out.stdout).lines().count() == 11 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Both gone: custom resources fail, built-in ones and discovery do not.
    c.kill(Role::Extensions, 1, nix::sys::signal::Signal::SIGKILL)
        .expect("kill");
    std::thread::sleep(Duration::from_millis(500));
    assert!(!c.kubectl(&["get", "widgets"]).status.success());
    c.kubectl_ok(&["get", "configmaps", "-n", "kube-system"]);
    let versions = c.kubectl_ok(&["api-versions"]);
    assert!(versions.contains("apps/v1"), "{versions}");
}

#[test]
fn every_served_version_serves_the_stored_objects() {
    let c = start_cluster(|_| {});
    let two_versions = CRD.replace(
        "  versions:\n  - name: v1\n    served: true\n    storage: true\n",
        "  versions:\n  - name: v1beta1\n    served: true\n    storage: false\n    deprecated: true\n    \
         selectableFields:\n    - jsonPath: .spec.color\n    schema:\n      openAPIV3Schema:\n        \
         type: object\n        x-kubernetes-preserve-unknown-fields: true\n        properties:\n          \
         spec:\n            type: object\n            x-kubernetes-preserve-unknown-fields: true\n            \
         properties:\n              color: {type: string}\n  - name: v1\n    served: true\n    storage: true\n",
    );
    ok(c.kubectl_stdin(&["apply"], &two_versions));
    create_within(&c, WIDGET, Instant::now(), Duration::from_secs(2));
    // The highest version is preferred; both are listed, v1 first.
    let versions = c.kubectl_ok(&["api-versions"]);
    assert!(versions.contains("example.com/v1\n") && versions.contains("example.com/v1beta1\n"));
    let group: Value =
        serde_json::from_str(&c.kubectl_ok(&["get", "--raw", "/apis/example.com"])).expect("JSON");
    assert_eq!(group["preferredVersion"]["version"], "v1");
    assert_eq!(group["versions"][1]["version"], "v1beta1");

    // The object written through v1 reads through v1beta1, with a deprecation warning.
    let out = c.kubectl(&["get", "widgets.v1beta1.example.com", "w1", "-o", "json"]);
    let w: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(w["apiVersion"], "example.com/v1beta1");
    assert_eq!(w["spec"]["replicas"], 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "Warning: example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget"
        ),
        "{stderr}"
    );
    let crd = c.kubectl_json(&["get", "crd", "widgets.example.com"]);
    assert_eq!(crd["status"]["storedVersions"], serde_json::json!(["v1"]));

    // A field selectable in v1beta1 only selects there and is refused in v1.
    let by_color = |resource: &str| {
        c.kubectl(&[
            "get",
            resource,
            "--field-selector",
            "spec.color=blue",
            "-o",
            "name",
        ])
    };
    let out = by_color("widgets.v1beta1.example.com");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "widget.example.com/w1\n"
    );
    let refused = String::from_utf8_lossy(&by_color("widgets.v1.example.com").stderr).into_owned();
    assert!(
        refused.contains("field label not supported: spec.color"),
        "{refused}"
    );
    // A selectable field added to v1 later selects at once (the cache indexes it).
    let more = two_versions.replace(
        "    subresources:\n      status: {}\n",
        "    selectableFields:\n    - jsonPath: .spec.size\n    subresources:\n      status: {}\n",
    );
    ok(c.kubectl_stdin(&["apply"], &more));
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let out = c.kubectl(&[
            "get",
            "widgets",
            "--field-selector",
            "spec.size=small",
            "-o",
            "name",
        ]);
        if String::from_utf8_lossy(&out.stdout) == "widget.example.com/w1\n" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn selectable_fields_watches_and_terminating_crds() {
    let c = start_cluster(|_| {});
    let selectable = CRD.replace(
        "    subresources:\n      status: {}\n",
        "    selectableFields:\n    - jsonPath: .spec.color\n    subresources:\n      status: {}\n",
    );
    ok(c.kubectl_stdin(&["apply"], &selectable));
    create_within(&c, WIDGET, Instant::now(), Duration::from_secs(2));
    ok(c.kubectl_stdin(
        &["create"],
        &WIDGET
            .replace("name: w1", "name: w2")
            .replace("color: blue", "color: red"),
    ));
    assert_eq!(
        c.kubectl_ok(&[
            "get",
            "widgets",
            "--field-selector",
            "spec.color=red",
            "-o",
            "name"
        ]),
        "widget.example.com/w2\n"
    );
    let err = c.kubectl_fails(&["get", "widgets", "--field-selector", "spec.size=x"]);
    assert!(
        err.contains("field label not supported: spec.size"),
        "{err}"
    );

    // kubectl get -w prints the table, then each change.
    let mut watch = std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(c.kubeconfig_path())
        .args(["get", "widgets", "-w", "--request-timeout=5s"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl");
    std::thread::sleep(Duration::from_millis(700));
    c.kubectl_ok(&["scale", "widget", "w1", "--replicas", "7"]);
    std::thread::sleep(Duration::from_millis(700));
    let _ = watch.kill();
    let out = watch.wait_with_output().expect("kubectl -w");
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["NAME", "REPLICAS", "AGE"], "{text}");
    assert!(
        rows.iter()
            .any(|r| r.first() == Some(&"w1") && r.get(1) == Some(&"7")),
        "{text}"
    );

    // A terminating CRD takes no new objects; deletecollection empties it.
    let mut finalized = WIDGET.replace("name: w1", "name: held");
    finalized = finalized.replace(
        "metadata:\n",
        "metadata:\n  finalizers: [example.com/hold]\n",
    );
    ok(c.kubectl_stdin(&["create"], &finalized));
    c.kubectl_ok(&["delete", "crd", "widgets.example.com", "--wait=false"]);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let out = c.kubectl_stdin(&["create"], &WIDGET.replace("name: w1", "name: late"));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if err.contains("create not allowed while custom resource definition is terminating") {
            break;
        }
        assert!(Instant::now() < deadline, "{err}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The finalizer holds the last object, and with it the CRD, until it is removed.
    std::thread::sleep(Duration::from_millis(500));
    let crd = c.kubectl_json(&["get", "crd", "widgets.example.com"]);
    assert_eq!(condition(&crd, "Terminating")["status"], "True", "{crd}");
    c.kubectl_ok(&[
        "patch",
        "widget",
        "held",
        "--type",
        "merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while c
        .kubectl(&["get", "crd", "widgets.example.com"])
        .status
        .success()
    {
        assert!(Instant::now() < deadline, "the CRD stayed");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn custom_resources_are_admitted_only_into_existing_namespaces() {
    let c = start_cluster(|_| {});
    ok(c.kubectl_stdin(&["apply"], CRD));
    let deadline = Instant::now() + Duration::from_secs(2);
    let err = loop {
        let out = c.kubectl_stdin(&["create", "-n", "nowhere"], WIDGET);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if err.contains("not found") && !err.contains("the server could not find") {
            break err;
        }
        assert!(Instant::now() < deadline, "{err}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        err.contains("Error from server (NotFound): error when creating \"STDIN\": namespaces \"nowhere\" not found"),
        "{err}"
    );
    c.kubectl_ok(&["create", "namespace", "somewhere"]);
    let deadline = Instant::now() + Duration::from_secs(2);
    while !c
        .kubectl_stdin(&["create", "-n", "somewhere"], WIDGET)
        .status
        .success()
    {
        assert!(
            Instant::now() < deadline,
            "not admitted into a new namespace"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_aggregator_sends_custom_groups_straight_to_extensions() {
    use kas_e2e::Role;
    let mut c = start_cluster(|_| {});
    ok(c.kubectl_stdin(&["apply"], CRD));
    create_within(&c, WIDGET, Instant::now(), Duration::from_secs(2));
    let raw = |c: &kas_e2e::TestCluster, path: &str| {
        c.kubectl(&["get", "--raw", path, "--request-timeout=2s"])
    };
    let widget = "/apis/example.com/v1/namespaces/default/widgets/w1";
    // The aggregator learns extensions' groups from its discovery, as core does.
    std::thread::sleep(Duration::from_millis(500));
    // With core frozen, the custom group still answers; a built-in one does not.
    c.kill(Role::Core, 0, nix::sys::signal::Signal::SIGSTOP)
        .expect("stop core");
    let custom = raw(&c, widget);
    let builtin = raw(&c, "/api/v1/namespaces/default/configmaps");
    c.kill(Role::Core, 0, nix::sys::signal::Signal::SIGCONT)
        .expect("continue core");
    assert!(
        custom.status.success(),
        "{}",
        String::from_utf8_lossy(&custom.stderr)
    );
    let w: Value = serde_json::from_slice(&custom.stdout).expect("JSON");
    assert_eq!(w["metadata"]["name"], "w1");
    assert!(!builtin.status.success());
}
