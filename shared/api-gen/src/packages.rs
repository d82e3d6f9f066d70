//! Which packages are generated, and where each lives in the three naming schemes: k8s-pb's
//! module, the OpenAPI definition prefix, and kas-api's module.

/// One proto package.
pub struct Package {
    /// The module in k8s-pb (and, under `v1_33/`, in k8s-openapi).
    pub pb: &'static [&'static str],
    /// The OpenAPI definition names' prefix.
    pub defs: &'static str,
    /// kas-api's module: `[group module, version]`.
    pub module: [&'static str; 2],
}

macro_rules! api {
    ($group:literal, $version:literal) => {
        Package {
            pb: &["api", $group, $version],
            defs: concat!("io.k8s.api.", $group, ".", $version),
            module: [$group, $version],
        }
    };
}

/// Every group version kube-apiserver 1.33 serves by default (its GA APIs; 1.33 enables no
/// beta API by default), apiextensions-apiserver's and the aggregator's, and meta's.
pub static PACKAGES: &[Package] = &[
    Package {
        pb: &["apimachinery", "pkg", "apis", "meta", "v1"],
        defs: "io.k8s.apimachinery.pkg.apis.meta.v1",
        module: ["meta", "v1"],
    },
    Package {
        pb: &["apimachinery", "pkg", "apis", "meta", "v1beta1"],
        defs: "io.k8s.apimachinery.pkg.apis.meta.v1beta1",
        module: ["meta", "v1beta1"],
    },
    api!("admissionregistration", "v1"),
    api!("apps", "v1"),
    api!("authentication", "v1"),
    api!("authorization", "v1"),
    api!("autoscaling", "v1"),
    api!("autoscaling", "v2"),
    api!("batch", "v1"),
    api!("certificates", "v1"),
    api!("coordination", "v1"),
    api!("core", "v1"),
    api!("discovery", "v1"),
    api!("events", "v1"),
    api!("flowcontrol", "v1"),
    api!("networking", "v1"),
    api!("node", "v1"),
    api!("policy", "v1"),
    api!("rbac", "v1"),
    api!("scheduling", "v1"),
    api!("storage", "v1"),
    Package {
        pb: &[
            "apiextensions_apiserver",
            "pkg",
            "apis",
            "apiextensions",
            "v1",
        ],
        defs: "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
        module: ["apiextensions", "v1"],
    },
    Package {
        pb: &["kube_aggregator", "pkg", "apis", "apiregistration", "v1"],
        defs: "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1",
        module: ["apiregistration", "v1"],
    },
];

/// Messages upstream hand-writes, which the schema model has kinds for, by k8s-pb module
/// and name.
pub fn special(module: &[String], name: &str) -> Option<&'static str> {
    let module: Vec<&str> = module.iter().map(String::as_str).collect();
    match (module.as_slice(), name) {
        (["apimachinery", "pkg", "apis", "meta", "v1"], "Time") => Some("Time"),
        (["apimachinery", "pkg", "apis", "meta", "v1"], "MicroTime") => Some("MicroTime"),
        (["apimachinery", "pkg", "apis", "meta", "v1"], "FieldsV1") => Some("FieldsV1"),
        (["apimachinery", "pkg", "runtime"], "RawExtension") => Some("RawExtension"),
        (["apimachinery", "pkg", "util", "intstr"], "IntOrString") => Some("IntOrString"),
        (["apimachinery", "pkg", "api", "resource"], "Quantity") => Some("Quantity"),
        (APIEXTENSIONS_V1, "Json") => Some("Json"),
        _ => None,
    }
}

const APIEXTENSIONS_V1: &[&str] = &[
    "apiextensions_apiserver",
    "pkg",
    "apis",
    "apiextensions",
    "v1",
];

/// Messages whose JSON upstream hand-writes as one of two forms, which the schema model has
/// kinds for: the kind's name. Their protobuf messages are generated (a union's kind
/// refers to its message), with prost's field names, since upstream's OpenAPI describes
/// only their JSON.
pub fn union(module: &[String], name: &str) -> Option<&'static str> {
    let module: Vec<&str> = module.iter().map(String::as_str).collect();
    match (module.as_slice(), name) {
        (APIEXTENSIONS_V1, "JsonSchemaPropsOrArray") => Some("JsonSchemaPropsOrArray"),
        (APIEXTENSIONS_V1, "JsonSchemaPropsOrBool") => Some("JsonSchemaPropsOrBool"),
        (APIEXTENSIONS_V1, "JsonSchemaPropsOrStringArray") => Some("JsonSchemaPropsOrStringArray"),
        _ => None,
    }
}

/// Messages that only k8s-pb has (upstream's OpenAPI leaves them out), generated because
/// the server answers with them; their JSON names are prost's field names in lower camel
/// case, checked to convert back.
pub static PROTO_ONLY: &[(&str, &str)] = &[
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1",
        "PartialObjectMetadata",
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1",
        "PartialObjectMetadataList",
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1beta1",
        "PartialObjectMetadataList",
    ),
    // Not served, but stored: the node port allocator's bitmap
    // (`/registry/ranges/servicenodeports`).
    ("io.k8s.api.core.v1", "RangeAllocation"),
];

/// Proto field names that prost's snake case does not give back, for messages whose field
/// names come from k8s-pb (the unions): `jSONSchemas` became `j_son_schemas`. gogo's
/// errors name the Go field after it (`JSONSchemas`).
pub static PROTO_NAMES: &[(&str, &str)] = &[("j_son_schemas", "jSONSchemas")];
