use super::*;

const DUAL: &[&str] = &["IPv4", "IPv6"];
const V4: &[&str] = &["IPv4"];
const V6_FIRST: &[&str] = &["IPv6", "IPv4"];

fn svc(spec: Value) -> Value {
    let mut spec = spec;
    if spec.get("type").is_none() {
        spec["type"] = json!("ClusterIP");
    }
    json!({"metadata": {"name": "s", "namespace": "default"}, "spec": spec})
}

fn init(spec: Value, old: Option<&Value>, families: &[&str]) -> Result<Value, Vec<String>> {
    let mut s = svc(spec);
    init_ip_family_fields(&mut s, old, families)
        .map(|()| s)
        .map_err(|errs| errs.iter().map(|e| e.to_string()).collect())
}

fn ok(spec: Value, old: Option<&Value>, families: &[&str]) -> (Value, Value) {
    let s = init(spec, old, families).expect("accepted");
    (
        s["spec"]["ipFamilyPolicy"].clone(),
        s["spec"]["ipFamilies"].clone(),
    )
}

fn errs(spec: Value, old: Option<&Value>, families: &[&str]) -> Vec<String> {
    init(spec, old, families).expect_err("refused")
}

#[test]
fn external_name_is_left_alone() {
    let s = init(
        json!({"type": "ExternalName", "externalName": "x"}),
        None,
        DUAL,
    )
    .unwrap();
    assert!(s["spec"].get("ipFamilyPolicy").is_none());
    assert!(s["spec"].get("ipFamilies").is_none());
}

#[test]
fn create_defaults() {
    assert_eq!(
        ok(json!({}), None, DUAL),
        (json!("SingleStack"), json!(["IPv4"]))
    );
    assert_eq!(ok(json!({}), None, V6_FIRST).1, json!(["IPv6"]));
    let p = json!({"ipFamilyPolicy": "PreferDualStack"});
    assert_eq!(ok(p.clone(), None, DUAL).1, json!(["IPv4", "IPv6"]));
    assert_eq!(ok(p, None, V4).1, json!(["IPv4"]));
    let p = json!({"ipFamilyPolicy": "RequireDualStack"});
    assert_eq!(ok(p, None, V6_FIRST).1, json!(["IPv6", "IPv4"]));
    let p = json!({"ipFamilyPolicy": "RequireDualStack", "ipFamilies": ["IPv6"]});
    assert_eq!(ok(p, None, DUAL).1, json!(["IPv6", "IPv4"]));
    // Families follow the cluster IPs.
    let p = json!({"ipFamilyPolicy": "PreferDualStack", "clusterIP": "fd00::5", "clusterIPs": ["fd00::5"]});
    assert_eq!(ok(p, None, DUAL).1, json!(["IPv6", "IPv4"]));
}

#[test]
fn headless_selectorless_defaults_to_require_dual_stack() {
    let h = json!({"clusterIP": "None", "clusterIPs": ["None"]});
    assert_eq!(
        ok(h.clone(), None, V4),
        (json!("RequireDualStack"), json!(["IPv4", "IPv6"]))
    );
    // With a selector it is SingleStack, and a single-stack cluster refuses dual-stack.
    let mut sel = h.clone();
    sel["selector"] = json!({"a": "b"});
    assert_eq!(
        ok(sel.clone(), None, V4),
        (json!("SingleStack"), json!(["IPv4"]))
    );
    sel["ipFamilyPolicy"] = json!("RequireDualStack");
    assert_eq!(
        errs(sel, None, V4),
        [
            r#"spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services"#
        ]
    );
    // Selectorless headless may name a family the cluster lacks.
    let mut v6 = h;
    v6["ipFamilies"] = json!(["IPv6"]);
    assert_eq!(ok(v6, None, V4).1, json!(["IPv6", "IPv4"]));
}

#[test]
fn create_refusals() {
    assert_eq!(
        errs(json!({"ipFamilyPolicy": "RequireDualStack"}), None, V4),
        [
            r#"spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services"#
        ]
    );
    assert_eq!(
        errs(json!({"ipFamilies": ["IPv6"]}), None, V4),
        [r#"spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster"#]
    );
    assert_eq!(
        errs(
            json!({"clusterIP": "fd00::1", "clusterIPs": ["fd00::1"]}),
            None,
            V4
        ),
        [
            r#"spec.clusterIPs[0]: Invalid value: []string{"fd00::1"}: IPv6 is not configured on this cluster"#
        ]
    );
    assert_eq!(
        errs(
            json!({"ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4", "IPv6"],
                "clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1", "fd00::1"]}),
            None,
            DUAL
        ),
        [
            r#"spec.ipFamilyPolicy: Invalid value: "SingleStack": must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"#,
            r#"spec.ipFamilyPolicy: Invalid value: "SingleStack": must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"#,
        ]
    );
    // The loose pre-validation comes first, alone.
    let e = errs(json!({"clusterIPs": ["10.0.0.1"]}), None, DUAL);
    assert_eq!(e.len(), 1);
    assert!(
        e[0].contains("must be empty when `clusterIP` is not specified"),
        "{e:?}"
    );
}

fn stored(policy: &str, ips: &[&str], families: &[&str]) -> Value {
    svc(
        json!({"ipFamilyPolicy": policy, "clusterIP": ips[0], "clusterIPs": ips, "ipFamilies": families}),
    )
}

#[test]
fn update_upgrade_and_downgrade() {
    let single = stored("SingleStack", &["10.0.0.1"], &["IPv4"]);
    let mut up = single["spec"].clone();
    up["ipFamilyPolicy"] = json!("PreferDualStack");
    let new = init(up, Some(&single), DUAL).unwrap();
    assert_eq!(new["spec"]["ipFamilies"], json!(["IPv4", "IPv6"]));
    assert_eq!(ip_update(&new, &single), IpUpdate::Upgrade);

    // Policy left out of a PUT: the old one.
    let mut keep = single["spec"].clone();
    keep.as_object_mut().unwrap().remove("ipFamilyPolicy");
    let new = init(keep, Some(&single), DUAL).unwrap();
    assert_eq!(new["spec"]["ipFamilyPolicy"], "SingleStack");
    assert_eq!(ip_update(&new, &single), IpUpdate::Keep);

    let dual = stored(
        "RequireDualStack",
        &["10.0.0.1", "fd00::1"],
        &["IPv4", "IPv6"],
    );
    // Untrimmed: SingleStack alone trims the unchanged fields.
    let mut down = dual["spec"].clone();
    down["ipFamilyPolicy"] = json!("SingleStack");
    let new = init(down, Some(&dual), DUAL).unwrap();
    assert_eq!(new["spec"]["clusterIPs"], json!(["10.0.0.1"]));
    assert_eq!(new["spec"]["ipFamilies"], json!(["IPv4"]));
    assert_eq!(ip_update(&new, &dual), IpUpdate::Downgrade);
    // Trimmed without SingleStack: refused.
    let mut bad = dual["spec"].clone();
    bad["clusterIPs"] = json!(["10.0.0.1"]);
    bad["ipFamilies"] = json!(["IPv4"]);
    assert_eq!(
        errs(bad, Some(&dual), DUAL),
        [
            r#"spec.ipFamilyPolicy: Invalid value: "RequireDualStack": must be 'SingleStack' to release the secondary cluster IP"#,
            r#"spec.ipFamilyPolicy: Invalid value: "RequireDualStack": must be 'SingleStack' to release the secondary IP family"#,
        ]
    );
    // SingleStack with the secondary IP changed: not trimmed, refused.
    let mut changed = dual["spec"].clone();
    changed["ipFamilyPolicy"] = json!("SingleStack");
    changed["clusterIPs"] = json!(["10.0.0.1", "fd00::2"]);
    assert_eq!(
        errs(changed, Some(&dual), DUAL),
        [
            r#"spec.ipFamilyPolicy: Invalid value: "SingleStack": must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"#
        ]
    );
}

#[test]
fn prefer_dual_stack_is_not_upgraded_by_the_cluster() {
    // Created on a single-stack cluster, updated on a dual-stack one: kept as it is.
    let old = stored("PreferDualStack", &["10.0.0.1"], &["IPv4"]);
    let new = init(old["spec"].clone(), Some(&old), DUAL).unwrap();
    assert_eq!(new["spec"]["ipFamilies"], json!(["IPv4"]));
    assert!(is_matching_prefer_dual_stack(&new, Some(&old)));
    assert_eq!(ip_update(&new, &old), IpUpdate::Keep);
    // RequireDualStack upgrades it.
    let mut req = old["spec"].clone();
    req["ipFamilyPolicy"] = json!("RequireDualStack");
    let new = init(req, Some(&old), DUAL).unwrap();
    assert_eq!(new["spec"]["ipFamilies"], json!(["IPv4", "IPv6"]));
    assert_eq!(ip_update(&new, &old), IpUpdate::Upgrade);
    // A type change runs the whole process.
    let mut np = old["spec"].clone();
    np["type"] = json!("NodePort");
    assert!(!is_matching_prefer_dual_stack(&svc(np), Some(&old)));
}

#[test]
fn type_changes() {
    let ext = svc(json!({"type": "ExternalName", "externalName": "x"}));
    let cip = stored("SingleStack", &["10.0.0.1"], &["IPv4"]);
    let new = init(json!({}), Some(&ext), DUAL).unwrap();
    assert_eq!(new["spec"]["ipFamilyPolicy"], "SingleStack");
    assert_eq!(ip_update(&new, &ext), IpUpdate::AllocateAll);
    assert_eq!(ip_update(&ext, &cip), IpUpdate::ReleaseAll);
    let mut np = cip.clone();
    np["spec"]["type"] = json!("NodePort");
    assert_eq!(ip_update(&np, &cip), IpUpdate::Keep);
    let headless = stored("SingleStack", &["None"], &["IPv4"]);
    assert_eq!(ip_update(&ext, &headless), IpUpdate::Keep);
}

#[test]
fn normalize() {
    let mut s = svc(json!({"clusterIP": "10.0.0.1"}));
    normalize_cluster_ips(&mut s, None);
    assert_eq!(s["spec"]["clusterIPs"], json!(["10.0.0.1"]));
    let old = stored("SingleStack", &["10.0.0.1"], &["IPv4"]);
    // Left out by an old client: kept.
    let mut s = svc(json!({"clusterIP": "10.0.0.1"}));
    normalize_cluster_ips(&mut s, Some(&old));
    assert_eq!(s["spec"]["clusterIPs"], json!(["10.0.0.1"]));
    // Singular cleared, plural unchanged: both cleared.
    let mut s = svc(json!({"clusterIP": "", "clusterIPs": ["10.0.0.1"]}));
    normalize_cluster_ips(&mut s, Some(&old));
    assert!(s["spec"]["clusterIPs"].is_null());
    // Singular changed, plural unchanged: plural follows.
    let mut s = svc(json!({"clusterIP": "10.0.0.2", "clusterIPs": ["10.0.0.1"]}));
    normalize_cluster_ips(&mut s, Some(&old));
    assert_eq!(s["spec"]["clusterIPs"], json!(["10.0.0.2"]));
}
