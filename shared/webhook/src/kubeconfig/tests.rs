use super::*;

fn write(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("config");
    std::fs::write(&path, text).unwrap();
    path
}

fn error_of(dir: &Path, text: &str) -> String {
    load(&write(dir, text)).unwrap_err().to_string()
}

const CA: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

#[test]
fn a_missing_file_is_a_stat_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing");
    assert_eq!(
        load(&path).unwrap_err().to_string(),
        format!("stat {}: no such file or directory", path.display())
    );
}

#[test]
fn without_a_context_the_unnamed_cluster_and_user_are_used() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.pem"), CA).unwrap();
    // Upstream's test kubeconfig: one cluster and one user, both without a name.
    let config = load(&write(
        dir.path(),
        "clusters:\n- cluster:\n    server: https://authz.example.com/authorize\n    certificate-authority: ca.pem\nusers:\n- user:\n    token: secret\n",
    ))
    .unwrap();
    assert_eq!(config.url, "https://authz.example.com/authorize");
    assert_eq!(config.tls.ca_data.as_deref(), Some(CA.as_bytes()));
    assert_eq!(config.token.unwrap().current(), "secret");
    assert_eq!(config.timeout, Duration::from_secs(30));
}

#[test]
fn named_entries_need_a_context_as_upstream() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.pem"), CA).unwrap();
    // Upstream's "a single cluster and single user" and "multiple clusters with no
    // context" both fail.
    assert_eq!(
        error_of(
            dir.path(),
            "clusters:\n- cluster:\n    certificate-authority: ca.pem\n    server: https://authz.example.com\n  name: foobar\nusers:\n- name: a cluster\n  user:\n    token: t\n"
        ),
        "invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable"
    );
    assert_eq!(
        error_of(dir.path(), ""),
        "invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable"
    );
    assert_eq!(
        error_of(dir.path(), "current-context: nope\n"),
        "invalid configuration: [context was not found for specified context: nope, cluster has no server defined]"
    );
}

#[test]
fn the_current_contexts_cluster_is_checked_and_paths_are_relative_to_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.pem"), CA).unwrap();
    let template = |cluster: &str| {
        format!(
            "clusters:\n- cluster:\n    certificate-authority: a bad certificate path\n    server: https://authz.example.com\n  name: foobar\n- cluster:\n    certificate-authority: ca.pem\n    server: https://authz.example.com\n  name: barfoo\nusers:\n- name: a name\n  user:\n    token: t\ncontexts:\n- name: default\n  context:\n    cluster: {cluster}\n    user: a name\ncurrent-context: default\n"
        )
    };
    let good = load(&write(dir.path(), &template("barfoo"))).unwrap();
    assert_eq!(good.tls.ca_data.as_deref(), Some(CA.as_bytes()));
    let bad = dir.path().join("a bad certificate path");
    assert_eq!(
        error_of(dir.path(), &template("foobar")),
        format!(
            "invalid configuration: unable to read certificate-authority {} for foobar due to open {}: no such file or directory",
            bad.display(),
            bad.display()
        )
    );
}

#[test]
fn cluster_and_user_checks_read_as_client_go_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.pem"), CA).unwrap();
    let with = |cluster: &str, user: &str| {
        format!(
            "clusters:\n- name: c\n  cluster:\n{cluster}users:\n- name: u\n  user:\n{user}contexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n"
        )
    };
    assert_eq!(
        error_of(
            dir.path(),
            &with("    insecure-skip-tls-verify: true\n", "    token: t\n")
        ),
        "invalid configuration: no server found for cluster \"c\""
    );
    assert_eq!(
        error_of(
            dir.path(),
            &with(
                "    server: https://h\n    certificate-authority: ca.pem\n    certificate-authority-data: Zm9v\n",
                "    token: t\n    username: admin\n"
            )
        ),
        "invalid configuration: [more than one authentication method found for u; found [token basicAuth], only one is allowed, certificate-authority-data and certificate-authority are both specified for c. certificate-authority-data will override.]"
    );
    assert_eq!(
        error_of(
            dir.path(),
            &with(
                "    server: https://h\n",
                "    client-certificate: ca.pem\n"
            )
        ),
        "invalid configuration: client-key-data or client-key must be specified for u to use the clientCert authentication method."
    );
    assert_eq!(
        error_of(
            dir.path(),
            &with(
                "    server: https://h\n    certificate-authority: ca.pem\n    insecure-skip-tls-verify: true\n",
                "    token: t\n"
            )
        ),
        "specifying a root certificates file with the insecure flag is not allowed"
    );
}

#[test]
fn decoding_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "clusters:\n- name: c\n  cluster:\n    server: 1\n",
    );
    assert_eq!(
        load(&path).unwrap_err().to_string(),
        format!(
            "error loading config file {}: json: cannot unmarshal number into Go struct field Cluster.clusters.cluster.server of type string",
            quote(&path.display().to_string())
        )
    );
    let msg = error_of(dir.path(), "clusters:\n- name: c\n- name: c\n");
    assert!(
        msg.ends_with("error converting *[]NamedCluster into *map[string]*api.Cluster: duplicate name \"c\" in list"),
        "{msg}"
    );
    let msg = error_of(dir.path(), "clusters: [\n");
    assert!(
        msg.contains(": error converting YAML to JSON: yaml: "),
        "{msg}"
    );
    let msg = error_of(
        dir.path(),
        "clusters:\n- name: c\n  cluster:\n    certificate-authority-data: '!!'\n",
    );
    assert!(
        msg.ends_with(": illegal base64 data at input byte 0"),
        "{msg}"
    );
}

#[test]
fn token_files_are_read_relative_to_the_file_and_trimmed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), "from-file\n").unwrap();
    let config = load(&write(
        dir.path(),
        "clusters:\n- cluster:\n    server: https://h/x\n    insecure-skip-tls-verify: true\n    tls-server-name: hook.local\nusers:\n- user:\n    tokenFile: token\n",
    ))
    .unwrap();
    assert!(config.tls.insecure);
    assert_eq!(config.tls.server_name.as_deref(), Some("hook.local"));
    assert_eq!(config.token.unwrap().current(), "from-file");
    let missing = dir.path().join("nope");
    assert_eq!(
        error_of(
            dir.path(),
            "clusters:\n- cluster:\n    server: https://h\nusers:\n- user:\n    tokenFile: nope\n"
        ),
        format!("open {}: no such file or directory", missing.display())
    );
}

#[test]
fn plain_http_servers_get_no_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let config = load(&write(
        dir.path(),
        "clusters:\n- cluster:\n    server: http://127.0.0.1:1/hook\nusers:\n- user:\n    token: t\n",
    ))
    .unwrap();
    assert_eq!(config.url, "http://127.0.0.1:1/hook");
    assert!(config.token.is_none());
}

#[test]
fn server_urls_are_posted_to_as_the_rest_client_does() {
    assert_eq!(request_url("https://h:8443"), "https://h:8443/");
    assert_eq!(request_url("https://h/authz/"), "https://h/authz");
    assert_eq!(request_url("https://h//a/./b/../c?x=1#f"), "https://h/a/c");
    let dir = tempfile::tempdir().unwrap();
    let config = load(&write(
        dir.path(),
        "clusters:\n- cluster:\n    server: h.example:8443/authz/\n    insecure-skip-tls-verify: true\n",
    ))
    .unwrap();
    assert_eq!(config.url, "https://h.example:8443/authz");
}
