//! `serviceaccounts/token`, after upstream's `TokenREST` (`pkg/registry/core/serviceaccount/
//! storage/token.go`) and `ValidateTokenRequest`: a create of an authentication.k8s.io/v1
//! TokenRequest answered with the request and a signed token in its status.
//!
//! The answer is the TokenRequest, not a `Status`, so the subresource is not one of the
//! registry's `StrategyCreate` ones: it is served by a connecter registered for POST, which
//! decodes, admits (the validating plugins, as `Store::validate_subresource_create` runs
//! them), validates and answers as the create handler does. Upstream's audit annotation is
//! not written.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use http::{Response, StatusCode};
use kas_apimachinery::Status;
use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::validation::field::{BadValue, Error as FieldError, Path, invalid};
use kas_auth::authentication::serviceaccount::{
    BoundObject, EXPIRATION_EXTENSION_SECONDS, ObjectRef, TokenGenerator,
    WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS, claims,
};
use kas_endpoints::Body;
use kas_endpoints::handlers::connect::{ConnectRequest, Connecter};
use kas_endpoints::handlers::decode;
use kas_endpoints::installer::ApiGroups;
use kas_endpoints::negotiation::MediaType;
use kas_endpoints::responsewriters::{encode, negotiated, protobuf, response};
use kas_registry::descriptor::{ConnectMethod, ConnectSpec, SubresourceHandler, SubresourceKind};
use kas_registry::store::Store;
use kas_registry::{ResourceDescriptor, Result, Scope, Subresource, Verb};
use serde_json::{Value, json};

/// What the token subresource signs with (the completed service-account flags).
#[derive(Debug)]
pub struct TokenConfig {
    pub generator: TokenGenerator,
    /// `--api-audiences` (the issuers when unset): a request's default audiences.
    pub api_audiences: Vec<String>,
    /// `--service-account-max-token-expiration` in seconds; 0 when unset.
    pub max_expiration_seconds: i64,
    /// `--service-account-extend-token-expiration`.
    pub extend_expiration: bool,
}

pub const TOKEN: Subresource = Subresource {
    name: "token",
    verbs: &[Verb::Create],
    kind: Some(SubresourceKind {
        group: "authentication.k8s.io",
        version: "v1",
        kind: "TokenRequest",
        schema: &kas_api::authentication::v1::TOKEN_REQUEST,
    }),
    handler: SubresourceHandler::Connect(ConnectSpec {
        methods: &[ConnectMethod::Post],
        subpath: false,
        kind: "TokenRequest",
    }),
};

/// The TokenRequest kind, for decoding bodies and encoding answers; it is not stored.
static TOKEN_REQUEST: ResourceDescriptor = ResourceDescriptor {
    group: "authentication.k8s.io",
    version: "v1",
    kind: "TokenRequest",
    list_kind: "",
    plural: "",
    singular: "",
    short_names: &[],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: &[Verb::Create],
    subresources: &[],
    table_columns: &[],
    table_name_and_age: false,
    storage_resource: "",
    schema: Some(&kas_api::authentication::v1::TOKEN_REQUEST),
    list_schema: None,
};

const GROUP: &str = "authentication.k8s.io";
const KIND: &str = "TokenRequest";
/// Upstream's `MinTokenAgeSec`.
const MIN_TOKEN_AGE_SECONDS: i64 = 10 * 60;

/// Registers the connecter when a signing key is configured (the descriptor then lists the
/// subresource).
pub fn install(
    groups: ApiGroups,
    stores: &[Store],
    options: &crate::resources::ResourceOptions,
) -> ApiGroups {
    let Some(config) = options.service_account_token.clone() else {
        return groups;
    };
    let find = |plural| crate::admission::store(stores, "", plural);
    let (Some(svcaccts), Some(pods), Some(secrets), Some(nodes)) = (
        find("serviceaccounts"),
        find("pods"),
        find("secrets"),
        find("nodes"),
    ) else {
        return groups;
    };
    let rest = TokenRest {
        config,
        svcaccts,
        pods,
        secrets,
        nodes,
    };
    groups.with_connecter(("", "serviceaccounts", "token"), Arc::new(rest))
}

struct TokenRest {
    config: Arc<TokenConfig>,
    svcaccts: Store,
    pods: Store,
    secrets: Store,
    nodes: Store,
}

impl Connecter for TokenRest {
    fn connect(
        &self,
        request: ConnectRequest,
        body: Body,
    ) -> BoxFuture<'_, Result<Response<Body>>> {
        Box::pin(self.serve(request, body))
    }
}

impl TokenRest {
    /// The create handler's part: options, negotiation, decoding, then the answer.
    async fn serve(&self, request: ConnectRequest, body: Body) -> Result<Response<Body>> {
        let (headers, query) = (&request.parts.headers, request.parts.uri.query());
        let mut opts = kas_endpoints::handlers::options::create_options(query)?;
        opts.user = request
            .parts
            .extensions
            .get::<kas_auth::UserInfo>()
            .cloned();
        let out = negotiated::negotiate_media(headers, query, false)?;
        let input = decode::read_input(headers, body).await?;
        let decoded = decode::decode(&TOKEN_REQUEST, &input, &opts)?;
        let user_agent = headers
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok());
        let manager =
            kas_apimachinery::managed_fields::manager(opts.field_manager.as_deref(), user_agent);
        let now = kas_registry::meta::rfc3339(SystemTime::now());
        let managed = managed::managed_fields(&decoded.value, &manager, now);
        let mut warnings = decoded.warnings;
        // Upstream's handler admits the decoded request before `TokenREST.Create` (the
        // NodeRestriction plugin's checks of a kubelet's request).
        self.svcaccts
            .validate_subresource_create(
                &request.namespace,
                &request.name,
                "token",
                &decoded.value,
                &opts,
            )
            .await?;
        let mut answer = self
            .create(
                &request.namespace,
                &request.name,
                decoded.value,
                &mut warnings,
            )
            .await?;
        kas_registry::meta::metadata_mut(&mut answer).insert("managedFields".into(), managed);
        kas_apimachinery::schema::go_encoded(
            &mut answer,
            &kas_apimachinery::schema::Kind::Message(&kas_api::authentication::v1::TOKEN_REQUEST),
        );
        let mut resp = if out.accepted == MediaType::Protobuf {
            negotiated::protobuf(
                StatusCode::CREATED,
                protobuf::object(&TOKEN_REQUEST, &answer)?,
            )
        } else {
            negotiated::render(
                &out,
                StatusCode::CREATED,
                encode::value(&TOKEN_REQUEST, &answer),
            )
        };
        response::add_warnings(&mut resp, &warnings);
        Ok(resp)
    }

    async fn get(store: &Store, namespace: &str, name: &str) -> Result<Value> {
        Ok(store.get(namespace, name, None).await?.value()?)
    }

    /// Upstream's `TokenREST.Create`.
    async fn create(
        &self,
        namespace: &str,
        name: &str,
        mut req: Value,
        warnings: &mut Vec<String>,
    ) -> Result<Value> {
        check_name_and_namespace(&req, name, namespace)?;
        let sa = Self::get(&self.svcaccts, namespace, name).await?;
        let now = SystemTime::now();
        prepare(&mut req, &sa, &self.config.api_audiences, now);
        let errs = validate_token_request(&req);
        if !errs.is_empty() {
            let causes = kas_registry::strategy::causes(errs);
            return Err(Status::invalid(GROUP, KIND, "", causes).into());
        }
        let bound = self.bound_object(namespace, name, &req).await?;
        let mut expiration = req
            .pointer("/spec/expirationSeconds")
            .and_then(Value::as_i64)
            .unwrap_or_default();
        let max = self.config.max_expiration_seconds;
        if max > 0 && expiration > max {
            warnings.push(format!(
                "requested expiration of {expiration} seconds shortened to {max} seconds"
            ));
            expiration = max;
            req["spec"]["expirationSeconds"] = max.into();
        }
        let audiences = string_list(req.pointer("/spec/audiences"));
        // Projected tokens of admission (3607 s, for the API only) of a pod are extended to
        // a year and warned about after their requested life.
        let (mut exp, mut warn_after) = (expiration, 0);
        if self.config.extend_expiration
            && matches!(bound, Some(BoundObject::Pod { .. }))
            && expiration == WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS
            && audiences
                .iter()
                .all(|a| self.config.api_audiences.contains(a))
        {
            warn_after = exp;
            exp = EXPIRATION_EXTENSION_SECONDS;
        }
        let sa_ref = ObjectRef {
            name: meta_str(&sa, "name"),
            uid: meta_str(&sa, "uid"),
        };
        let claims = claims(
            namespace,
            &sa_ref,
            bound.as_ref(),
            exp,
            warn_after,
            &audiences,
            now,
        );
        let token = self
            .config
            .generator
            .generate_token(&claims)
            .map_err(|e| Status::internal_error(&format!("failed to generate token: {e}")))?;
        let expires = now + Duration::from_secs(expiration.max(0) as u64);
        req["status"] = json!({
            "token": token,
            "expirationTimestamp": kas_registry::meta::rfc3339(expires),
        });
        Ok(req)
    }

    /// The object `spec.boundObjectRef` names, checked as upstream checks it.
    async fn bound_object(
        &self,
        namespace: &str,
        name: &str,
        req: &Value,
    ) -> Result<Option<BoundObject>> {
        let Some(r) = req
            .pointer("/spec/boundObjectRef")
            .filter(|r| r.is_object())
        else {
            return Ok(None);
        };
        let field = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
        let (kind, ref_name, ref_uid) = (field("kind"), field("name"), field("uid"));
        // Upstream's `FromAPIVersionAndKind`: an apiVersion that does not parse names no
        // group and no version.
        let (group, version) = match field("apiVersion").split('/').collect::<Vec<_>>()[..] {
            [v] => ("", v),
            [g, v] => (g, v),
            _ => ("", ""),
        };
        let (bound, uid) = match (group, kind) {
            ("", "Pod") => {
                let pod = Self::get(&self.pods, namespace, ref_name).await?;
                let pod_sa = pod
                    .pointer("/spec/serviceAccountName")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if name != pod_sa {
                    return Err(Status::bad_request(&format!(
                        "cannot bind token for serviceaccount {} to pod running with different serviceaccount name.",
                        quote(name)
                    ))
                    .into());
                }
                let node = self.pod_node(&pod).await?;
                let pod_ref = object_ref(&pod);
                let uid = pod_ref.uid.clone();
                (BoundObject::Pod { pod: pod_ref, node }, uid)
            }
            ("", "Node") => {
                let node = object_ref(&Self::get(&self.nodes, "", ref_name).await?);
                let uid = node.uid.clone();
                (BoundObject::Node(node), uid)
            }
            ("", "Secret") => {
                let secret = object_ref(&Self::get(&self.secrets, namespace, ref_name).await?);
                let uid = secret.uid.clone();
                (BoundObject::Secret(secret), uid)
            }
            _ => {
                return Err(Status::bad_request(&format!(
                    "cannot bind token to object of type {group}/{version}, Kind={kind}"
                ))
                .into());
            }
        };
        if !ref_uid.is_empty() && uid != ref_uid {
            return Err(Status::conflict(
                group,
                kind,
                ref_name,
                &format!(
                    "the UID in the bound object reference ({ref_uid}) does not match the UID in record. The object might have been deleted and then recreated"
                ),
            )
            .into());
        }
        Ok(Some(bound))
    }

    /// The node a bound pod runs on (ServiceAccountTokenPodNodeInfo): a missing node object
    /// still gives its name.
    async fn pod_node(&self, pod: &Value) -> Result<Option<ObjectRef>> {
        let node_name = pod
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if node_name.is_empty() {
            return Ok(None);
        }
        match self.nodes.get("", node_name, None).await {
            Ok(node) => Ok(Some(object_ref(&node.value()?))),
            Err(e) if e.to_status().code == 404 => Ok(Some(ObjectRef {
                name: node_name.to_owned(),
                uid: String::new(),
            })),
            Err(e) => {
                let message = e.to_status().message.unwrap_or_default();
                Err(Status::internal_error(&message).into())
            }
        }
    }
}

fn meta_str(obj: &Value, key: &str) -> String {
    obj.pointer(&format!("/metadata/{key}"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn object_ref(obj: &Value) -> ObjectRef {
    ObjectRef {
        name: meta_str(obj, "name"),
        uid: meta_str(obj, "uid"),
    }
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The body's name and namespace, when set, must be the URL's.
fn check_name_and_namespace(req: &Value, name: &str, namespace: &str) -> Result<()> {
    let meta = |k: &str| meta_str(req, k);
    let (body_name, body_namespace) = (meta("name"), meta("namespace"));
    let err = if !body_name.is_empty() && body_name != name {
        invalid(
            &Path::new("metadata").child("name"),
            BadValue::String(body_name),
            "must match the service account name if specified",
        )
    } else if !body_namespace.is_empty() && body_namespace != namespace {
        invalid(
            &Path::new("metadata").child("namespace"),
            BadValue::String(body_namespace),
            "must match the service account namespace if specified",
        )
    } else {
        return Ok(());
    };
    let causes = kas_registry::strategy::causes(vec![err]);
    Err(Status::invalid(GROUP, KIND, name, causes).into())
}

/// The v1 defaults and what `Create` fills in before validating: an hour's expiration,
/// the API audiences, the service account's name and namespace, the creation time, no
/// status.
pub fn prepare(req: &mut Value, sa: &Value, api_audiences: &[String], now: SystemTime) {
    if !req.is_object() {
        *req = json!({});
    }
    if !req.get("spec").is_some_and(Value::is_object) {
        req["spec"] = json!({});
    }
    let spec = &mut req["spec"];
    if !spec.get("expirationSeconds").is_some_and(Value::is_i64) {
        spec["expirationSeconds"] = 3600.into();
    }
    if string_list(spec.get("audiences")).is_empty() {
        spec["audiences"] = api_audiences.to_vec().into();
    }
    if !req.get("metadata").is_some_and(Value::is_object) {
        req["metadata"] = json!({});
    }
    for key in ["name", "namespace"] {
        if meta_str(req, key).is_empty() {
            req["metadata"][key] = meta_str(sa, key).into();
        }
    }
    req["metadata"]["creationTimestamp"] = kas_registry::meta::rfc3339(now).into();
    if let Some(obj) = req.as_object_mut() {
        obj.remove("status");
    }
}

/// Upstream's `ValidateTokenRequest`.
pub fn validate_token_request(req: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let path = Path::new("spec").child("expirationSeconds");
    let exp = req
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
        .unwrap_or_default();
    if exp < MIN_TOKEN_AGE_SECONDS {
        errs.push(invalid(
            &path,
            BadValue::Int(exp),
            "may not specify a duration less than 10 minutes",
        ));
    }
    if exp > 1 << 32 {
        errs.push(invalid(
            &path,
            BadValue::Int(exp),
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    errs
}

mod managed;

#[cfg(test)]
pub(crate) mod tests;
