use super::*;

/// A P-256 signing key for tests.
pub(crate) const EC_KEY: &str = "-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIDBw0ojQCcw4rz25tsknc7FMFLbpnj7RdbiMz1StmPXooAoGCCqGSM49
AwEHoUQDQgAEn1VK4Exe5D7Q9sJ+R/CHYd6gJhCKoMRcBJ0MHWmz8bhMfVAvdPyO
yAr5IZay60qGi281T8Agj7XJ/X6L5o1PXA==
-----END EC PRIVATE KEY-----
";

fn message(errs: Vec<FieldError>) -> String {
    let causes = kas_registry::strategy::causes(errs);
    Status::invalid(GROUP, KIND, "", causes)
        .message
        .unwrap_or_default()
}

fn with_expiration(exp: i64) -> Value {
    json!({"spec": {"expirationSeconds": exp}})
}

#[test]
fn expiration_bounds_are_upstreams() {
    assert_eq!(
        message(validate_token_request(&with_expiration(60))),
        "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"
    );
    assert_eq!(
        message(validate_token_request(&with_expiration((1 << 32) + 1))),
        "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds"
    );
    assert!(validate_token_request(&with_expiration(600)).is_empty());
    assert!(validate_token_request(&with_expiration(1 << 32)).is_empty());
}

#[test]
fn defaults_fill_what_kubectl_leaves_out() {
    // What `kubectl create token` sends without flags.
    let mut req = json!({
        "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"creationTimestamp": null},
        "spec": {"audiences": null, "boundObjectRef": null},
        "status": {"token": "", "expirationTimestamp": null}
    });
    let sa = json!({"metadata": {"name": "build", "namespace": "ns", "uid": "u"}});
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    prepare(
        &mut req,
        &sa,
        &["https://kubernetes.default.svc".to_owned()],
        now,
    );
    assert_eq!(req["spec"]["expirationSeconds"], 3600);
    assert_eq!(
        req["spec"]["audiences"],
        json!(["https://kubernetes.default.svc"])
    );
    assert_eq!(req["metadata"]["name"], "build");
    assert_eq!(req["metadata"]["namespace"], "ns");
    assert_eq!(req["metadata"]["creationTimestamp"], "2023-11-14T22:13:20Z");
    assert!(req.get("status").is_none());
    assert!(validate_token_request(&req).is_empty());
}

/// Objects by key; reads only.
struct Objects(std::collections::HashMap<String, Value>);

fn unsupported() -> kas_storage::Error {
    kas_storage::Error::internal("read only")
}

#[async_trait::async_trait]
impl kas_storage::Storage for Objects {
    async fn create(
        &self,
        _: &str,
        _: Value,
        _: Option<i64>,
    ) -> kas_storage::Result<kas_storage::ObjectRef> {
        Err(unsupported())
    }
    async fn get(
        &self,
        key: &str,
        _: &kas_storage::GetOptions,
    ) -> kas_storage::Result<Option<kas_storage::ObjectRef>> {
        self.0
            .get(key)
            .map(|v| kas_storage::Object::new(key, 7, v.clone()).map(Arc::new))
            .transpose()
    }
    async fn list(
        &self,
        _: &str,
        _: &kas_storage::ListOptions,
    ) -> kas_storage::Result<kas_storage::ListResult> {
        Err(unsupported())
    }
    async fn guaranteed_update(
        &self,
        _: &str,
        _: &kas_storage::Preconditions,
        _: bool,
        _: &kas_storage::UpdateFn<'_>,
        _: Option<kas_storage::ObjectRef>,
        _: Option<i64>,
    ) -> kas_storage::Result<kas_storage::ObjectRef> {
        Err(unsupported())
    }
    async fn delete(
        &self,
        _: &str,
        _: &kas_storage::Preconditions,
        _: &kas_storage::ValidateDeletionFn<'_>,
        _: Option<kas_storage::ObjectRef>,
    ) -> kas_storage::Result<kas_storage::ObjectRef> {
        Err(unsupported())
    }
    async fn watch(
        &self,
        _: &str,
        _: &kas_storage::WatchOptions,
    ) -> kas_storage::Result<kas_storage::WatchStream> {
        Err(unsupported())
    }
    async fn count(&self, _: &str) -> kas_storage::Result<i64> {
        Ok(0)
    }
    async fn current_revision(&self) -> kas_storage::Result<u64> {
        Ok(7)
    }
}

fn store(
    install: fn(&crate::resources::ResourceOptions) -> crate::resources::Install,
    objects: Vec<Value>,
) -> Store {
    let inst = install(&Default::default());
    let probe = Store::new(
        inst.descriptor,
        inst.strategy.clone(),
        Arc::new(Objects(Default::default())),
    );
    let map = objects
        .into_iter()
        .map(|o| {
            (
                probe.key(&meta_str(&o, "namespace"), &meta_str(&o, "name")),
                o,
            )
        })
        .collect();
    Store::new(inst.descriptor, inst.strategy, Arc::new(Objects(map)))
}

fn rest(max: i64) -> TokenRest {
    use crate::resources::{nodes, pods, secrets};
    let key =
        kas_auth::authentication::serviceaccount::keys::parse_private_key_pem(EC_KEY.as_bytes())
            .unwrap();
    TokenRest {
        config: Arc::new(TokenConfig {
            generator: TokenGenerator::new("https://iss", key).unwrap(),
            api_audiences: vec!["https://iss".into()],
            max_expiration_seconds: max,
            extend_expiration: true,
        }),
        svcaccts: store(
            super::super::install,
            vec![json!({"metadata": {"name": "build", "namespace": "ns", "uid": "sa-uid"}})],
        ),
        pods: store(
            pods::install,
            vec![
                json!({"metadata": {"name": "p", "namespace": "ns", "uid": "pod-uid"}, "spec": {"serviceAccountName": "build", "nodeName": "n1", "containers": []}}),
                json!({"metadata": {"name": "q", "namespace": "ns", "uid": "q-uid"}, "spec": {"serviceAccountName": "default", "containers": []}}),
            ],
        ),
        secrets: store(
            secrets::install,
            vec![json!({"metadata": {"name": "s", "namespace": "ns", "uid": "s-uid"}})],
        ),
        nodes: store(nodes::install, vec![]),
    }
}

fn claims_of(token: &str) -> Value {
    let jws = kas_auth::authentication::serviceaccount::jwt::parse(token).unwrap();
    serde_json::from_slice(&jws.payload).unwrap()
}

#[tokio::test]
async fn kubectl_create_token_is_answered_with_a_signed_token() {
    let rest = rest(0);
    let body = br#"{"kind":"TokenRequest","apiVersion":"authentication.k8s.io/v1","metadata":{"creationTimestamp":null},"spec":{"audiences":null,"expirationSeconds":null,"boundObjectRef":null},"status":{"token":"","expirationTimestamp":null}}"#;
    let (parts, ()) = http::Request::post("/api/v1/namespaces/ns/serviceaccounts/build/token")
        .header("content-type", "application/json")
        .header("accept", "application/json, */*")
        .body(())
        .unwrap()
        .into_parts();
    let request = ConnectRequest {
        namespace: "ns".into(),
        name: "build".into(),
        subresource: "token",
        subpath: String::new(),
        parts,
    };
    let resp = rest
        .serve(request, kas_endpoints::body::full(&body[..]))
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    use http_body_util::BodyExt as _;
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(answer["kind"], "TokenRequest");
    assert_eq!(answer["apiVersion"], "authentication.k8s.io/v1");
    assert_eq!(answer["metadata"]["name"], "build");
    assert_eq!(answer["metadata"]["namespace"], "ns");
    assert_eq!(
        answer["spec"],
        // Go writes the nil pointer: the field has no omitempty.
        json!({"audiences": ["https://iss"], "boundObjectRef": null, "expirationSeconds": 3600})
    );
    let token = answer["status"]["token"].as_str().unwrap();
    let jws = kas_auth::authentication::serviceaccount::jwt::parse(token).unwrap();
    jws.verify(rest.config.generator.public_key()).unwrap();
    let c = claims_of(token);
    assert_eq!(c["iss"], "https://iss");
    assert_eq!(c["sub"], "system:serviceaccount:ns:build");
    assert_eq!(
        c["exp"].as_i64().unwrap() - c["iat"].as_i64().unwrap(),
        3600
    );
    assert_eq!(
        c["kubernetes.io"],
        json!({"namespace": "ns", "serviceaccount": {"name": "build", "uid": "sa-uid"}})
    );
    let exp = kas_registry::meta::rfc3339(
        SystemTime::UNIX_EPOCH + Duration::from_secs(c["exp"].as_u64().unwrap()),
    );
    assert_eq!(answer["status"]["expirationTimestamp"], exp);
}

#[tokio::test]
async fn bound_objects_and_the_maximum() {
    let rest = rest(7200);
    let mut warnings = Vec::new();
    let req = json!({"spec": {"expirationSeconds": 10000, "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "pod-uid"}}});
    let out = rest
        .create("ns", "build", req, &mut warnings)
        .await
        .unwrap();
    assert_eq!(
        warnings,
        vec!["requested expiration of 10000 seconds shortened to 7200 seconds"]
    );
    assert_eq!(out["spec"]["expirationSeconds"], 7200);
    let c = claims_of(out["status"]["token"].as_str().unwrap());
    // The node object is missing: its name alone.
    assert_eq!(
        c["kubernetes.io"]["pod"],
        json!({"name": "p", "uid": "pod-uid"})
    );
    assert_eq!(c["kubernetes.io"]["node"], json!({"name": "n1"}));

    // Admission's projected tokens are extended to a year.
    let req = json!({"spec": {"expirationSeconds": 3607, "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}}});
    let out = rest
        .create("ns", "build", req, &mut warnings)
        .await
        .unwrap();
    let c = claims_of(out["status"]["token"].as_str().unwrap());
    let iat = c["iat"].as_i64().unwrap();
    assert_eq!(c["exp"].as_i64().unwrap() - iat, 365 * 24 * 3600);
    assert_eq!(
        c["kubernetes.io"]["warnafter"].as_i64().unwrap() - iat,
        3607
    );

    let err = |req: Value| {
        let rest = &rest;
        async move {
            let mut w = Vec::new();
            let status = rest
                .create("ns", "build", req, &mut w)
                .await
                .unwrap_err()
                .to_status();
            (status.code, status.message.unwrap_or_default())
        }
    };
    assert_eq!(
        err(json!({"spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "q"}}})).await,
        (400, "cannot bind token for serviceaccount \"build\" to pod running with different serviceaccount name.".to_owned())
    );
    assert_eq!(
        err(json!({"spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p", "uid": "old"}}})).await,
        (409, "Operation cannot be fulfilled on Pod \"p\": the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated".to_owned())
    );
    assert_eq!(
        err(json!({"spec": {"boundObjectRef": {"kind": "ConfigMap", "apiVersion": "v1", "name": "c"}}})).await,
        (400, "cannot bind token to object of type /v1, Kind=ConfigMap".to_owned())
    );
    assert_eq!(
        err(json!({"spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "apps/v1", "name": "p"}}}))
            .await,
        (400, "cannot bind token to object of type apps/v1, Kind=Pod".to_owned())
    );
    assert_eq!(
        err(
            json!({"spec": {"boundObjectRef": {"kind": "Node", "apiVersion": "v1", "name": "n1"}}})
        )
        .await,
        (404, "nodes \"n1\" not found".to_owned())
    );
    assert_eq!(
        err(json!({"spec": {"expirationSeconds": 60}})).await,
        (422, "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes".to_owned())
    );
    let mut w = Vec::new();
    let status = rest
        .create("ns", "ghost", json!({}), &mut w)
        .await
        .unwrap_err()
        .to_status();
    assert_eq!(
        (status.code, status.message.as_deref()),
        (404, Some("serviceaccounts \"ghost\" not found"))
    );
    let out = rest.create("ns", "build", json!({"spec": {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "s"}}}), &mut w).await.unwrap();
    let c = claims_of(out["status"]["token"].as_str().unwrap());
    assert_eq!(
        c["kubernetes.io"]["secret"],
        json!({"name": "s", "uid": "s-uid"})
    );
}

#[test]
fn body_name_must_be_the_urls() {
    let err = check_name_and_namespace(&json!({"metadata": {"name": "x"}}), "build", "ns")
        .unwrap_err()
        .to_status();
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message.as_deref(),
        Some(
            "TokenRequest.authentication.k8s.io \"build\" is invalid: metadata.name: Invalid value: \"x\": must match the service account name if specified"
        )
    );
    let err = check_name_and_namespace(&json!({"metadata": {"namespace": "y"}}), "b", "ns")
        .unwrap_err()
        .to_status();
    assert!(
        err.message
            .unwrap_or_default()
            .ends_with("metadata.namespace: Invalid value: \"y\": must match the service account namespace if specified")
    );
    assert!(check_name_and_namespace(&json!({}), "b", "ns").is_ok());
}

#[tokio::test]
async fn issued_tokens_authenticate_against_the_stores() {
    use kas_auth::authentication::serviceaccount::JwtTokenAuthenticator;
    let rest = rest(0);
    let lookup = super::super::lookup::StoreLookup {
        svcaccts: rest.svcaccts.clone(),
        pods: rest.pods.clone(),
        secrets: rest.secrets.clone(),
        nodes: rest.nodes.clone(),
    };
    let auth = JwtTokenAuthenticator::new(
        vec!["https://iss".into()],
        vec![rest.config.generator.public_key().clone()],
        vec!["https://iss".into()],
        Arc::new(lookup),
    );
    let mut w = Vec::new();
    let req = json!({"spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "p"}}});
    let out = rest.create("ns", "build", req, &mut w).await.unwrap();
    let token = out["status"]["token"].as_str().unwrap();
    let user = auth
        .authenticate_token(token, None)
        .await
        .unwrap()
        .unwrap()
        .user;
    assert_eq!(user.name, "system:serviceaccount:ns:build");
    assert_eq!(user.uid, "sa-uid");
    assert_eq!(
        user.extra["authentication.kubernetes.io/pod-name"],
        vec!["p"]
    );
    assert_eq!(
        user.extra["authentication.kubernetes.io/node-name"],
        vec!["n1"]
    );
    // Bound to a secret, which exists with the claimed UID.
    let req =
        json!({"spec": {"boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "s"}}});
    let out = rest.create("ns", "build", req, &mut w).await.unwrap();
    assert!(
        auth.authenticate_token(out["status"]["token"].as_str().unwrap(), None)
            .await
            .unwrap()
            .is_some()
    );
}
