//! ConfigMap and Secret: configuration data, plain and confidential.

use crate::meta::v1::{API_VERSION, KIND, OBJECT_METADATA};
use crate::{Field, Kind, Message};

pub static CONFIG_MAP: Message = Message {
    name: "io.k8s.api.core.v1.ConfigMap",
    description: "Non-confidential configuration data for pods to consume.",
    fields: &[
        KIND,
        API_VERSION,
        OBJECT_METADATA,
        Field::new("immutable", 4, Kind::Bool)
            .pointer()
            .describe("When true, only the metadata can change after creation."),
        Field::new("data", 2, Kind::Map(&Kind::String))
            .describe("UTF-8 values by key; keys may not also appear in binaryData."),
        Field::new("binaryData", 3, Kind::Map(&Kind::Bytes))
            .describe("Binary values by key, base64 in JSON; keys may not also appear in data."),
    ],
    required: &[],
    atomic: false,
};

pub static CONFIG_MAP_LIST: Message = list!(
    "io.k8s.api.core.v1.ConfigMapList",
    CONFIG_MAP,
    "config maps"
);

pub static SECRET: Message = Message {
    name: "io.k8s.api.core.v1.Secret",
    description: "Confidential data, such as passwords, tokens or keys.",
    fields: &[
        KIND,
        API_VERSION,
        OBJECT_METADATA,
        Field::new("immutable", 5, Kind::Bool)
            .pointer()
            .describe("When true, only the metadata can change after creation."),
        Field::new("data", 2, Kind::Map(&Kind::Bytes)).describe("Values by key, base64 in JSON."),
        // Write-only: the server folds it into `data` and never returns it.
        Field::new("stringData", 4, Kind::Map(&Kind::String)).describe(
            "Plain-text values merged into data on write, winning over data; never read back.",
        ),
        Field::new("type", 3, Kind::String)
            .describe("What the secret holds, which decides the keys it must have."),
    ],
    required: &[],
    atomic: false,
};

pub static SECRET_LIST: Message = list!("io.k8s.api.core.v1.SecretList", SECRET, "secrets");
