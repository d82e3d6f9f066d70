//! The `scale` subresource through `ApiService` over a real etcd: GET, PUT (stale
//! resourceVersion, invalid replicas), PATCH of every type, dry runs, field validation
//! and the answer's media types, for a test resource declared with `Subresource::scale`.

use std::convert::Infallible;
use std::sync::Arc;

use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use kas_apimachinery::patch::{NoSchema, PatchSchema};
use kas_endpoints::installer::{ApiGroups, ApiService};
use kas_endpoints::{Body, RequestInfoFactory, body};
use kas_local::etcd::TestEtcd;
use kas_registry::store::Store;
use kas_registry::strategy::FieldErrors;
use kas_registry::{
    ResourceDescriptor, ScaleSelector, ScaleSpec, Scope, Strategy, Subresource, Verb,
};
use kas_storage_etcd::{Client, EtcdStore};
use serde_json::{Value, json};
use tower::ServiceExt;

static WIDGETS: ResourceDescriptor = ResourceDescriptor {
    group: "example.com",
    version: "v1",
    kind: "Widget",
    list_kind: "WidgetList",
    plural: "widgets",
    singular: "widget",
    short_names: &[],
    categories: &[],
    scope: Scope::Namespaced,
    verbs: Verb::ALL,
    subresources: &[Subresource::scale(ScaleSpec {
        spec_replicas: ".spec.replicas",
        status_replicas: ".status.replicas",
        label_selector: Some(ScaleSelector::LabelSelector(".spec.selector")),
    })],
    table_columns: &[],
    table_name_and_age: true,
    storage_resource: "widgets",
    schema: None,
    list_schema: None,
};

/// Like a deployment's: the generation counts spec changes, so a scale write shows that
/// the resource's own update rules ran.
struct WidgetStrategy;

impl Strategy for WidgetStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        obj["metadata"]["generation"] = json!(1);
    }

    fn validate(&self, _obj: &Value) -> FieldErrors {
        Vec::new()
    }

    fn prepare_for_update(&self, new: &mut Value, old: &Value) {
        let generation = old["metadata"]["generation"].as_i64().unwrap_or(0);
        let bumped = generation + i64::from(new["spec"] != old["spec"]);
        new["metadata"]["generation"] = json!(bumped);
    }

    fn validate_update(&self, _new: &Value, _old: &Value) -> FieldErrors {
        Vec::new()
    }

    // Built-in-like: strategic merge patch is served.
    fn patch_schema(&self) -> Option<&dyn PatchSchema> {
        Some(&NoSchema)
    }
}

struct Env {
    _etcd: TestEtcd,
    _dir: tempfile::TempDir,
    service:
        ApiService<tower::util::BoxCloneSyncService<Request<Body>, Response<Body>, Infallible>>,
}

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    bytes: bytes::Bytes,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&self.bytes));
        })
    }

    fn message(&self) -> String {
        self.json()["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

const WIDGET: &str = "/apis/example.com/v1/namespaces/ns/widgets/w";
const SCALE: &str = "/apis/example.com/v1/namespaces/ns/widgets/w/scale";

async fn start() -> Env {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().to_path_buf();
    let etcd = tokio::task::spawn_blocking(move || TestEtcd::start(&path))
        .await
        .expect("join")
        .expect("etcd starts (apt-get install etcd-server)");
    let client = Client::connect([etcd.url()], None).await.expect("connect");
    let storage = Arc::new(EtcdStore::new(client, "/registry"));
    let store = Store::new(&WIDGETS, Arc::new(WidgetStrategy), storage);
    let next = tower::service_fn(|_: Request<Body>| async {
        let mut resp = Response::new(body::empty());
        *resp.status_mut() = StatusCode::NOT_FOUND;
        Ok::<_, Infallible>(resp)
    });
    let service = ApiService::new(
        ApiGroups::new(vec![store]),
        tower::util::BoxCloneSyncService::new(next),
    );
    let env = Env {
        _etcd: etcd,
        _dir: dir,
        service,
    };
    let widget = json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "labels": {"app": "w"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "w"}}},
        "status": {"replicas": 1},
    });
    let created = env
        .call(
            Method::POST,
            "/apis/example.com/v1/namespaces/ns/widgets",
            None,
            &widget,
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.message());
    env
}

impl Env {
    /// A request as the server's filters hand it on: with its `RequestInfo`.
    async fn request(
        &self,
        method: Method,
        uri: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Answer {
        let mut req = Request::builder().method(method).uri(uri);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let mut req = req.body(body::full(body)).expect("request");
        let info = RequestInfoFactory::default().new_request_info(req.method(), req.uri());
        req.extensions_mut().insert(info);
        let resp = self.service.clone().oneshot(req).await.expect("infallible");
        let (parts, body) = resp.into_parts();
        let bytes = body.collect().await.expect("body").to_bytes();
        Answer {
            status: parts.status,
            headers: parts.headers,
            bytes,
        }
    }

    async fn call(
        &self,
        method: Method,
        uri: &str,
        content_type: Option<&str>,
        body: &Value,
    ) -> Answer {
        let content_type = content_type.unwrap_or("application/json");
        let bytes = if body.is_null() {
            Vec::new()
        } else {
            serde_json::to_vec(body).expect("json")
        };
        self.request(method, uri, &[("content-type", content_type)], bytes)
            .await
    }

    async fn get(&self, uri: &str) -> Value {
        let answer = self.call(Method::GET, uri, None, &Value::Null).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.message());
        answer.json()
    }
}

fn scale(replicas: i64, resource_version: &str) -> Value {
    json!({
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "w", "namespace": "ns", "resourceVersion": resource_version},
        "spec": {"replicas": replicas},
    })
}

#[tokio::test]
async fn get_shows_the_parents_replicas_selector_and_identity() {
    let env = start().await;
    let widget = env.get(WIDGET).await;
    let got = env.get(SCALE).await;
    assert_eq!(got["kind"], "Scale");
    assert_eq!(got["apiVersion"], "autoscaling/v1");
    let meta = &widget["metadata"];
    assert_eq!(
        got["metadata"],
        json!({
            "name": "w",
            "namespace": "ns",
            "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"],
            "creationTimestamp": meta["creationTimestamp"],
        })
    );
    assert_eq!(got["spec"], json!({"replicas": 2}));
    assert_eq!(got["status"], json!({"replicas": 1, "selector": "app=w"}));

    let missing = env
        .call(
            Method::GET,
            "/apis/example.com/v1/namespaces/ns/widgets/nope/scale",
            None,
            &Value::Null,
        )
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.message(), "widgets.example.com \"nope\" not found");

    let delete = env.call(Method::DELETE, SCALE, None, &Value::Null).await;
    assert_eq!(delete.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn get_answers_protobuf_yaml_and_tables() {
    let env = start().await;
    let proto = env
        .request(
            Method::GET,
            SCALE,
            &[("accept", "application/vnd.kubernetes.protobuf")],
            Vec::new(),
        )
        .await;
    assert_eq!(proto.status, StatusCode::OK);
    assert_eq!(
        proto.headers[header::CONTENT_TYPE],
        "application/vnd.kubernetes.protobuf"
    );
    let envelope = kas_apimachinery::protobuf::decode_envelope(&proto.bytes).expect("envelope");
    assert_eq!(
        (envelope.api_version.as_str(), envelope.kind.as_str()),
        ("autoscaling/v1", "Scale")
    );
    let decoded =
        kas_apimachinery::protobuf::decode(&envelope.raw, &kas_api::autoscaling::v1::SCALE)
            .expect("decode");
    assert_eq!(decoded["spec"]["replicas"], 2);
    assert_eq!(decoded["status"]["selector"], "app=w");

    let yaml = env
        .request(
            Method::GET,
            SCALE,
            &[("accept", "application/yaml")],
            Vec::new(),
        )
        .await;
    assert_eq!(yaml.headers[header::CONTENT_TYPE], "application/yaml");
    assert!(String::from_utf8_lossy(&yaml.bytes).contains("kind: Scale\n"));

    let table = env
        .request(
            Method::GET,
            SCALE,
            &[("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")],
            Vec::new(),
        )
        .await;
    assert_eq!(table.status, StatusCode::OK);
    let table = table.json();
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["columnDefinitions"][1]["name"], "Desired");
    assert_eq!(table["rows"][0]["cells"][1], 2);
    assert_eq!(table["rows"][0]["cells"][2], 1);
}

#[tokio::test]
async fn put_checks_the_version_validates_and_writes_replicas() {
    let env = start().await;
    let before = env.get(WIDGET).await;
    let rv = before["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();

    let stale = env.call(Method::PUT, SCALE, None, &scale(5, "1")).await;
    assert_eq!(stale.status, StatusCode::CONFLICT);
    assert_eq!(
        stale.message(),
        "Operation cannot be fulfilled on widgets.example.com \"w\": the object has been modified; please apply your changes to the latest version and try again"
    );

    let negative = env.call(Method::PUT, SCALE, None, &scale(-1, &rv)).await;
    assert_eq!(negative.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        negative.message(),
        "Scale.autoscaling \"w\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    );
    let details = &negative.json()["details"];
    assert_eq!(details["kind"], "Scale");
    assert_eq!(details["group"], "autoscaling");
    assert_eq!(details["causes"][0]["field"], "spec.replicas");

    let renamed = env
        .call(
            Method::PUT,
            SCALE,
            None,
            &json!({"metadata": {"name": "x"}}),
        )
        .await;
    assert_eq!(renamed.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        renamed.message(),
        "the name of the object (x) does not match the name on the URL (w)"
    );

    let written = env.call(Method::PUT, SCALE, None, &scale(5, &rv)).await;
    assert_eq!(written.status, StatusCode::OK, "{}", written.message());
    let answer = written.json();
    assert_eq!(answer["kind"], "Scale");
    assert_eq!(answer["spec"]["replicas"], 5);
    let after = env.get(WIDGET).await;
    assert_eq!(after["spec"]["replicas"], 5);
    assert_eq!(after["spec"]["selector"], before["spec"]["selector"]);
    assert_eq!(after["metadata"]["generation"], 2);
    assert_eq!(
        answer["metadata"]["resourceVersion"],
        after["metadata"]["resourceVersion"]
    );
    assert_ne!(after["metadata"]["resourceVersion"], rv.as_str());

    // Without a resourceVersion the write is unconditional, as the strategy allows.
    let mut unconditional = scale(6, "");
    unconditional["metadata"]
        .as_object_mut()
        .expect("meta")
        .remove("resourceVersion");
    let written = env.call(Method::PUT, SCALE, None, &unconditional).await;
    assert_eq!(written.status, StatusCode::OK, "{}", written.message());
    assert_eq!(env.get(WIDGET).await["spec"]["replicas"], 6);
}

#[tokio::test]
async fn put_decodes_as_other_writes() {
    let env = start().await;
    let mut unknown = scale(3, "");
    unknown["spec"]["bogus"] = json!(1);
    let strict = env
        .call(
            Method::PUT,
            &format!("{SCALE}?fieldValidation=Strict"),
            None,
            &unknown,
        )
        .await;
    assert_eq!(strict.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        strict.message(),
        "Scale in version \"v1\" cannot be handled as a Scale: strict decoding error: unknown field \"spec.bogus\""
    );
    let warned = env.call(Method::PUT, SCALE, None, &unknown).await;
    assert_eq!(warned.status, StatusCode::OK, "{}", warned.message());
    let warning = warned.headers[header::WARNING].to_str().expect("ascii");
    assert!(
        warning.contains("unknown field \\\"spec.bogus\\\""),
        "{warning}"
    );

    let wrong_type = env
        .call(
            Method::PUT,
            SCALE,
            None,
            &json!({"metadata": {"name": "w"}, "spec": {"replicas": "3"}}),
        )
        .await;
    assert_eq!(wrong_type.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        wrong_type.message(),
        "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32"
    );
}

#[tokio::test]
async fn patches_apply_to_the_scale() {
    let env = start().await;
    let merge = env
        .call(
            Method::PATCH,
            SCALE,
            Some("application/merge-patch+json"),
            &json!({"spec": {"replicas": 7}}),
        )
        .await;
    assert_eq!(merge.status, StatusCode::OK, "{}", merge.message());
    assert_eq!(merge.json()["spec"]["replicas"], 7);
    assert_eq!(env.get(WIDGET).await["spec"]["replicas"], 7);

    let ops = json!([{"op": "replace", "path": "/spec/replicas", "value": 8}]);
    let json_patch = env
        .call(
            Method::PATCH,
            SCALE,
            Some("application/json-patch+json"),
            &ops,
        )
        .await;
    assert_eq!(
        json_patch.status,
        StatusCode::OK,
        "{}",
        json_patch.message()
    );
    assert_eq!(json_patch.json()["spec"]["replicas"], 8);

    let strategic = env
        .call(
            Method::PATCH,
            SCALE,
            Some("application/strategic-merge-patch+json"),
            &json!({"spec": {"replicas": 9}}),
        )
        .await;
    assert_eq!(strategic.status, StatusCode::OK, "{}", strategic.message());
    assert_eq!(env.get(WIDGET).await["spec"]["replicas"], 9);

    let negative = env
        .call(
            Method::PATCH,
            SCALE,
            Some("application/merge-patch+json"),
            &json!({"spec": {"replicas": -3}}),
        )
        .await;
    assert_eq!(negative.status, StatusCode::UNPROCESSABLE_ENTITY);

    let stale = json!({"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 1}});
    let stale = env
        .call(
            Method::PATCH,
            SCALE,
            Some("application/merge-patch+json"),
            &stale,
        )
        .await;
    assert_eq!(stale.status, StatusCode::CONFLICT);
    assert_eq!(env.get(WIDGET).await["spec"]["replicas"], 9);
}

#[tokio::test]
async fn dry_runs_write_nothing() {
    let env = start().await;
    let before = env.get(WIDGET).await;
    let rv = before["metadata"]["resourceVersion"].clone();

    let put = env
        .call(
            Method::PUT,
            &format!("{SCALE}?dryRun=All"),
            None,
            &scale(4, rv.as_str().expect("rv")),
        )
        .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.message());
    assert_eq!(put.json()["spec"]["replicas"], 4);
    assert_eq!(put.json()["metadata"]["resourceVersion"], rv);

    let patch = env
        .call(
            Method::PATCH,
            &format!("{SCALE}?dryRun=All"),
            Some("application/merge-patch+json"),
            &json!({"spec": {"replicas": 6}}),
        )
        .await;
    assert_eq!(patch.status, StatusCode::OK, "{}", patch.message());
    assert_eq!(patch.json()["spec"]["replicas"], 6);

    let invalid = env
        .call(
            Method::PUT,
            &format!("{SCALE}?dryRun=All"),
            None,
            &scale(-1, ""),
        )
        .await;
    assert_eq!(invalid.status, StatusCode::UNPROCESSABLE_ENTITY);

    let after = env.get(WIDGET).await;
    assert_eq!(after["spec"]["replicas"], 2);
    assert_eq!(after["metadata"]["resourceVersion"], rv);
}
