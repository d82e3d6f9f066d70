//! A webhook's configuration file in kubeconfig format, read as upstream's
//! `webhook.LoadKubeconfig` reads it through client-go's `clientcmd` (an explicit path, no
//! overrides): the current context's cluster and user (with no `current-context`, the
//! cluster and user named `""`), paths relative to the file's directory, client-go's
//! `ConfirmUsable` checks and error texts, and the REST config's 30 s timeout.
//!
//! Supported: `server`, `certificate-authority(-data)`, `insecure-skip-tls-verify`,
//! `tls-server-name`, `client-certificate(-data)`/`client-key(-data)`, `token`/`tokenFile`,
//! `username`/`password`. `exec`, `auth-provider` and impersonating users are refused;
//! proxies are not read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kas_apimachinery::golang::base64::STD_ENCODING;
use kas_apimachinery::golang::json::describe;
use kas_apimachinery::golang::net::errno;
use kas_apimachinery::golang::strconv::quote;
use serde_json::Value;

use crate::{Error, Result, TlsConfig};

/// Upstream's `defaultRequestTimeout` of webhook clients.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a `tokenFile`'s content is used before it is read again (client-go's
/// `CachedFileTokenSource`).
const TOKEN_FILE_REFRESH: Duration = Duration::from_secs(60);

/// What a webhook is called with: its URL, TLS and bearer token.
#[derive(Debug)]
pub struct WebhookConfig {
    /// The exact URL requests are posted to.
    pub url: String,
    pub tls: TlsConfig,
    pub token: Option<BearerToken>,
    /// A kubeconfig user's `username` and `password`.
    pub basic_auth: Option<(String, String)>,
    pub timeout: Duration,
}

/// A kubeconfig user's `token`, or its `tokenFile`, read again every minute (client-go's
/// bearer round tripper: the file's trimmed content, else the token).
#[derive(Debug)]
pub struct BearerToken {
    token: String,
    file: Option<PathBuf>,
    cached: Mutex<Option<(Instant, String)>>,
}

impl BearerToken {
    pub fn new(token: String, file: Option<PathBuf>) -> BearerToken {
        BearerToken {
            token,
            file,
            cached: Mutex::new(None),
        }
    }

    /// The token to send now.
    pub fn current(&self) -> String {
        let Some(file) = &self.file else {
            return self.token.clone();
        };
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, token)) = &*cached
            && at.elapsed() < TOKEN_FILE_REFRESH
        {
            return token.clone();
        }
        match std::fs::read_to_string(file) {
            Ok(text) if !text.trim().is_empty() => {
                let token = text.trim().to_owned();
                *cached = Some((Instant::now(), token.clone()));
                token
            }
            _ => self.token.clone(),
        }
    }
}

#[derive(Debug, Default, PartialEq)]
struct Cluster {
    server: String,
    tls_server_name: String,
    insecure: bool,
    ca: String,
    ca_data: Vec<u8>,
    /// Fields set that this loader does not read (`proxy-url`, `extensions`, ...): the
    /// cluster is not "empty" in client-go's sense.
    other: bool,
}

#[derive(Debug, Default)]
struct AuthInfo {
    client_certificate: String,
    client_certificate_data: Vec<u8>,
    client_key: String,
    client_key_data: Vec<u8>,
    token: String,
    token_file: String,
    username: String,
    password: String,
    unsupported: Vec<&'static str>,
}

#[derive(Debug, Default)]
struct Context {
    cluster: String,
    user: String,
}

#[derive(Debug, Default)]
struct Config {
    clusters: BTreeMap<String, Cluster>,
    users: BTreeMap<String, AuthInfo>,
    contexts: BTreeMap<String, Context>,
    current_context: String,
}

/// Upstream's `webhook.LoadKubeconfig(path)` followed by the REST client's TLS setup.
pub fn load(path: &Path) -> Result<WebhookConfig> {
    let shown = path.display().to_string();
    if let Err(e) = std::fs::metadata(path)
        && e.kind() == std::io::ErrorKind::NotFound
    {
        return Err(Error::Kubeconfig(format!("stat {shown}: {}", errno(&e))));
    }
    let loading = |message: String| {
        Error::Kubeconfig(format!(
            "error loading config file {}: {message}",
            quote(&shown)
        ))
    };
    let data = std::fs::read(path).map_err(|e| loading(format!("open {shown}: {}", errno(&e))))?;
    let mut config = parse(&data).map_err(loading)?;
    let base = std::path::absolute(path.parent().unwrap_or(Path::new(".")))
        .unwrap_or_else(|_| PathBuf::from("."));
    resolve_paths(&mut config, &base);
    client_config(&config)
}

fn parse(data: &[u8]) -> Result<Config, String> {
    if data.is_empty() {
        return Ok(Config::default());
    }
    let value =
        kas_apimachinery::runtime::serializer::yaml_to_json(data).map_err(|e| e.to_string())?;
    if value.is_null() {
        return Ok(Config::default());
    }
    kas_apimachinery::runtime::serializer::interpret(&value).map_err(|e| e.to_string())?;
    let mut config = Config {
        current_context: string(&value, "Config", "current-context", "current-context")?,
        ..Config::default()
    };
    for (name, item) in named(&value, "clusters", "NamedCluster", "Cluster")? {
        let c = item.get("cluster").unwrap_or(&Value::Null);
        let at = |field: &str| format!("clusters.cluster.{field}");
        let cluster = Cluster {
            server: string(c, "Cluster", "server", &at("server"))?,
            tls_server_name: string(c, "Cluster", "tls-server-name", &at("tls-server-name"))?,
            insecure: boolean(
                c,
                "Cluster",
                "insecure-skip-tls-verify",
                &at("insecure-skip-tls-verify"),
            )?,
            ca: string(
                c,
                "Cluster",
                "certificate-authority",
                &at("certificate-authority"),
            )?,
            ca_data: bytes(c, "certificate-authority-data")?,
            other: ["proxy-url", "disable-compression", "extensions"]
                .iter()
                .any(|f| c.get(*f).is_some_and(|v| !is_zero(v))),
        };
        config.clusters.insert(name, cluster);
    }
    for (name, item) in named(&value, "users", "NamedAuthInfo", "AuthInfo")? {
        let u = item.get("user").unwrap_or(&Value::Null);
        let at = |field: &str| format!("users.user.{field}");
        let text = |field: &str| string(u, "AuthInfo", field, &at(field));
        let user = AuthInfo {
            client_certificate: text("client-certificate")?,
            client_certificate_data: bytes(u, "client-certificate-data")?,
            client_key: text("client-key")?,
            client_key_data: bytes(u, "client-key-data")?,
            token: text("token")?,
            token_file: text("tokenFile")?,
            username: text("username")?,
            password: text("password")?,
            unsupported: ["exec", "auth-provider", "as", "as-uid", "as-groups"]
                .into_iter()
                .filter(|f| u.get(*f).is_some_and(|v| !is_zero(v)))
                .collect(),
        };
        config.users.insert(name, user);
    }
    for (name, item) in named(&value, "contexts", "NamedContext", "Context")? {
        let c = item.get("context").unwrap_or(&Value::Null);
        let context = Context {
            cluster: string(c, "Context", "cluster", "contexts.context.cluster")?,
            user: string(c, "Context", "user", "contexts.context.user")?,
        };
        config.contexts.insert(name, context);
    }
    Ok(config)
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) => false,
    }
}

/// Go's `UnmarshalTypeError` text for a field of a struct.
fn type_error(v: &Value, strukt: &str, path: &str, go_type: &str) -> String {
    format!(
        "json: cannot unmarshal {} into Go struct field {strukt}.{path} of type {go_type}",
        describe(v)
    )
}

fn string(obj: &Value, strukt: &str, field: &str, path: &str) -> Result<String, String> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v) => Err(type_error(v, strukt, path, "string")),
    }
}

fn boolean(obj: &Value, strukt: &str, field: &str, path: &str) -> Result<bool, String> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(type_error(v, strukt, path, "bool")),
    }
}

/// A `[]byte` field: base64 in the document.
fn bytes(obj: &Value, field: &str) -> Result<Vec<u8>, String> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => STD_ENCODING.decode_string(s).map_err(|e| e.to_string()),
        Some(v) => Err(format!(
            "json: cannot unmarshal {} into Go value of type []uint8",
            describe(v)
        )),
    }
}

/// A list of named entries (`clusters`, `users`, `contexts`) as client-go converts it to a
/// map: a repeated name is an error.
fn named<'a>(
    doc: &'a Value,
    list: &str,
    item_type: &str,
    internal: &str,
) -> Result<Vec<(String, &'a Value)>, String> {
    let items = match doc.get(list) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(v) => return Err(type_error(v, "Config", list, &format!("[]v1.{item_type}"))),
    };
    let mut out: Vec<(String, &Value)> = Vec::new();
    for item in items {
        if !(item.is_object() || item.is_null()) {
            return Err(format!(
                "json: cannot unmarshal {} into Go struct field Config.{list} of type v1.{item_type}",
                describe(item)
            ));
        }
        let name = string(item, item_type, "name", &format!("{list}.name"))?;
        if out.iter().any(|(n, _)| *n == name) {
            return Err(format!(
                "error converting *[]{item_type} into *map[string]*api.{internal}: duplicate name {} in list",
                quote(&name)
            ));
        }
        out.push((name, item));
    }
    Ok(out)
}

/// client-go's `ResolveLocalPaths`: relative file references are relative to the file.
fn resolve_paths(config: &mut Config, base: &Path) {
    let resolve = |p: &mut String| {
        if !p.is_empty() && !Path::new(p.as_str()).is_absolute() {
            *p = base.join(p.as_str()).display().to_string();
        }
    };
    for cluster in config.clusters.values_mut() {
        resolve(&mut cluster.ca);
    }
    for user in config.users.values_mut() {
        resolve(&mut user.client_certificate);
        resolve(&mut user.client_key);
        resolve(&mut user.token_file);
    }
}

/// client-go's `DirectClientConfig.ClientConfig()` (its `ConfirmUsable` checks), then the
/// REST client's TLS and bearer-token setup.
fn client_config(config: &Config) -> Result<WebhookConfig> {
    let empty_context = Context::default();
    let empty_user = AuthInfo::default();
    let empty_cluster = Cluster::default();
    let context = config
        .contexts
        .get(&config.current_context)
        .unwrap_or(&empty_context);
    let user = config.users.get(&context.user).unwrap_or(&empty_user);
    let cluster = config
        .clusters
        .get(&context.cluster)
        .unwrap_or(&empty_cluster);
    let mut errors = Vec::new();
    if !config.current_context.is_empty() && !config.contexts.contains_key(&config.current_context)
    {
        errors.push(format!(
            "context was not found for specified context: {}",
            config.current_context
        ));
    }
    errors.extend(validate_auth_info(&context.user, user));
    errors.extend(validate_cluster(&context.cluster, cluster));
    if errors.len() == 1 && errors[0] == EMPTY_CLUSTER {
        errors[0] = EMPTY_CONFIG.to_owned();
    }
    if !errors.is_empty() {
        return Err(Error::Kubeconfig(format!(
            "invalid configuration: {}",
            aggregate(errors)
        )));
    }
    if let Some(field) = user.unsupported.first() {
        return Err(Error::Kubeconfig(format!(
            "the webhook kubeconfig's user {} sets {field}, which is not supported",
            quote(&context.user)
        )));
    }
    rest_config(cluster, user)
}

const EMPTY_CLUSTER: &str = "cluster has no server defined";
const EMPTY_CONFIG: &str =
    "no configuration has been provided, try setting KUBERNETES_MASTER environment variable";

/// Upstream's `utilerrors.NewAggregate(...).Error()`: one message bare, several bracketed,
/// repeats dropped.
fn aggregate(errors: Vec<String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for e in errors {
        if !seen.contains(&e) {
            seen.push(e);
        }
    }
    match seen.len() {
        1 => seen.remove(0),
        _ => format!("[{}]", seen.join(", ")),
    }
}

fn open_error(path: &str) -> Option<String> {
    std::fs::File::open(path)
        .err()
        .map(|e| format!("open {path}: {}", errno(&e)))
}

/// client-go's `validateClusterInfo`.
fn validate_cluster(name: &str, cluster: &Cluster) -> Vec<String> {
    if *cluster == Cluster::default() {
        return vec![EMPTY_CLUSTER.to_owned()];
    }
    let mut errors = Vec::new();
    if cluster.server.is_empty() {
        errors.push(match name {
            "" => "default cluster has no server defined".to_owned(),
            _ => format!("no server found for cluster {}", quote(name)),
        });
    }
    if !cluster.ca.is_empty() && !cluster.ca_data.is_empty() {
        errors.push(format!("certificate-authority-data and certificate-authority are both specified for {name}. certificate-authority-data will override."));
    }
    if !cluster.ca.is_empty()
        && let Some(e) = open_error(&cluster.ca)
    {
        errors.push(format!(
            "unable to read certificate-authority {} for {name} due to {e}",
            cluster.ca
        ));
    }
    errors
}

/// client-go's `validateAuthInfo` (the checks of what this loader reads).
fn validate_auth_info(name: &str, user: &AuthInfo) -> Vec<String> {
    let mut errors = Vec::new();
    let mut methods = Vec::new();
    if !user.token.is_empty() {
        methods.push("token");
    }
    if !user.username.is_empty() || !user.password.is_empty() {
        methods.push("basicAuth");
    }
    let has_cert = !user.client_certificate.is_empty() || !user.client_certificate_data.is_empty();
    if has_cert {
        if !user.client_certificate.is_empty() && !user.client_certificate_data.is_empty() {
            errors.push(format!("client-cert-data and client-cert are both specified for {name}. client-cert-data will override."));
        }
        if !user.client_key.is_empty() && !user.client_key_data.is_empty() {
            errors.push(format!("client-key-data and client-key are both specified for {name}; client-key-data will override"));
        }
        if user.client_key.is_empty() && user.client_key_data.is_empty() {
            errors.push(format!("client-key-data or client-key must be specified for {name} to use the clientCert authentication method."));
        }
        if !user.client_certificate.is_empty()
            && let Some(e) = open_error(&user.client_certificate)
        {
            errors.push(format!(
                "unable to read client-cert {} for {name} due to {e}",
                user.client_certificate
            ));
        }
        if !user.client_key.is_empty()
            && let Some(e) = open_error(&user.client_key)
        {
            errors.push(format!(
                "unable to read client-key {} for {name} due to {e}",
                user.client_key
            ));
        }
    }
    if methods.len() > 1 {
        errors.push(format!(
            "more than one authentication method found for {name}; found [{}], only one is allowed",
            methods.join(" ")
        ));
    }
    errors
}

fn read(path: &str) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::Kubeconfig(format!("open {path}: {}", errno(&e))))
}

/// Where the REST client posts for a server URL: its query and fragment dropped, its
/// path cleaned as Go's `path.Join` cleans it (`/` when empty).
fn request_url(server: &str) -> String {
    let server = server.split(['?', '#']).next().unwrap_or_default();
    let (scheme, rest) = server.split_once("://").unwrap_or(("", server));
    let (host, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("{scheme}://{host}/{}", parts.join("/"))
}

/// The REST client's view: the URL (`https://` assumed for a bare host with TLS settings,
/// as `DefaultServerURL`), and, for `https` only, the user's credentials and the cluster's
/// TLS settings (`IsConfigTransportTLS`).
fn rest_config(cluster: &Cluster, user: &AuthInfo) -> Result<WebhookConfig> {
    let has_ca = !cluster.ca.is_empty() || !cluster.ca_data.is_empty();
    let has_cert = !user.client_certificate.is_empty() || !user.client_certificate_data.is_empty();
    let default_tls = has_ca || has_cert || cluster.insecure;
    let url = match cluster.server.split_once("://") {
        Some((scheme, host)) if !scheme.is_empty() && !host.is_empty() => cluster.server.clone(),
        _ if default_tls => format!("https://{}", cluster.server),
        _ => format!("http://{}", cluster.server),
    };
    let mut webhook = WebhookConfig {
        url: request_url(&url),
        tls: TlsConfig::default(),
        token: None,
        basic_auth: None,
        timeout: DEFAULT_REQUEST_TIMEOUT,
    };
    if !webhook.url.starts_with("https://") {
        return Ok(webhook);
    }
    if !user.token.is_empty() {
        let file = (!user.token_file.is_empty()).then(|| PathBuf::from(&user.token_file));
        webhook.token = Some(BearerToken::new(user.token.clone(), file));
    } else if !user.token_file.is_empty() {
        let token = String::from_utf8_lossy(&read(&user.token_file)?).into_owned();
        webhook.token = Some(BearerToken::new(
            token,
            Some(PathBuf::from(&user.token_file)),
        ));
    }
    if !user.username.is_empty() || !user.password.is_empty() {
        webhook.basic_auth = Some((user.username.clone(), user.password.clone()));
    }
    if has_ca && cluster.insecure {
        return Err(Error::Kubeconfig(
            "specifying a root certificates file with the insecure flag is not allowed".to_owned(),
        ));
    }
    let data_or_file = |data: &[u8], file: &str| -> Result<Option<Vec<u8>>> {
        match (data.is_empty(), file.is_empty()) {
            (false, _) => Ok(Some(data.to_vec())),
            (true, false) => read(file).map(Some),
            (true, true) => Ok(None),
        }
    };
    webhook.tls.ca_data = data_or_file(&cluster.ca_data, &cluster.ca)?;
    webhook.tls.insecure = cluster.insecure;
    webhook.tls.server_name =
        (!cluster.tls_server_name.is_empty()).then(|| cluster.tls_server_name.clone());
    if has_cert {
        let cert = data_or_file(&user.client_certificate_data, &user.client_certificate)?;
        let key = data_or_file(&user.client_key_data, &user.client_key)?;
        if let (Some(cert), Some(key)) = (cert, key) {
            webhook.tls.client_cert = Some((cert, key));
        }
    }
    Ok(webhook)
}

#[cfg(test)]
mod tests;
