//! The legacy discovery documents served at `/api`, `/apis` and each group version.

use crate::{Field, Kind, ListType, Message};

use super::{API_VERSION, KIND};

pub static API_RESOURCE: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.APIResource",
    description: "One resource of a group version and what it supports.",
    fields: &[
        Field::new("name", 1, Kind::String)
            .always()
            .describe("Plural resource name; resource/subresource for a subresource."),
        Field::new("singularName", 6, Kind::String)
            .always()
            .describe("Singular name, as kubectl shows it."),
        Field::new("namespaced", 2, Kind::Bool)
            .always()
            .describe("Whether objects of the resource live in namespaces."),
        Field::new("group", 8, Kind::String)
            .describe("Group of the resource's kind when it differs from the list's."),
        Field::new("version", 9, Kind::String)
            .describe("Version of the resource's kind when it differs from the list's."),
        Field::new("kind", 3, Kind::String)
            .always()
            .describe("The kind of the resource's objects."),
        // Upstream's protobuf wraps the strings in a `Verbs { repeated string items = 1; }`
        // message; the schema model has no kind for a wrapped list yet.
        Field::new("verbs", 4, Kind::Array(&Kind::String))
            .always()
            .describe("The verbs the resource supports: get, list, watch, create, ..."),
        Field::new("shortNames", 5, Kind::Array(&Kind::String))
            .list_type(ListType::Atomic)
            .describe("Abbreviations of the resource name."),
        Field::new("categories", 7, Kind::Array(&Kind::String))
            .list_type(ListType::Atomic)
            .describe("Groupings the resource belongs to, such as all."),
        Field::new("storageVersionHash", 10, Kind::String)
            .describe("Hash of the version objects are stored in; changes when it changes."),
    ],
    required: &["name", "singularName", "namespaced", "kind", "verbs"],
    atomic: false,
};

pub static API_RESOURCE_LIST: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList",
    description: "The resources a group version serves.",
    fields: &[
        KIND,
        API_VERSION,
        Field::new("groupVersion", 1, Kind::String)
            .always()
            .describe("The group version the resources belong to."),
        Field::new("resources", 2, Kind::Array(&Kind::Message(&API_RESOURCE)))
            .always()
            .list_type(ListType::Atomic)
            .describe("The resources."),
    ],
    required: &["groupVersion", "resources"],
    atomic: false,
};

pub static API_GROUP: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup",
    description: "An API group and the versions it serves.",
    fields: &[
        KIND,
        API_VERSION,
        Field::new("name", 1, Kind::String)
            .always()
            .describe("The group name."),
        Field::new(
            "versions",
            2,
            Kind::Array(&Kind::Message(&GROUP_VERSION_FOR_DISCOVERY)),
        )
        .always()
        .list_type(ListType::Atomic)
        .describe("The versions the group serves."),
        Field::new(
            "preferredVersion",
            3,
            Kind::Message(&GROUP_VERSION_FOR_DISCOVERY),
        )
        .describe("The version clients should use when they can."),
        Field::new(
            "serverAddressByClientCIDRs",
            4,
            Kind::Array(&Kind::Message(&SERVER_ADDRESS_BY_CLIENT_CIDR)),
        )
        .list_type(ListType::Atomic)
        .describe("Server addresses by client network, for clients to pick the closest."),
    ],
    required: &["name", "versions"],
    atomic: false,
};

pub static API_GROUP_LIST: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList",
    description: "The API groups served under /apis.",
    fields: &[
        KIND,
        API_VERSION,
        Field::new("groups", 1, Kind::Array(&Kind::Message(&API_GROUP)))
            .always()
            .list_type(ListType::Atomic)
            .describe("The groups."),
    ],
    required: &["groups"],
    atomic: false,
};

pub static API_VERSIONS: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions",
    description: "The versions of the core group, served at /api.",
    fields: &[
        KIND,
        API_VERSION,
        Field::new("versions", 1, Kind::Array(&Kind::String))
            .always()
            .list_type(ListType::Atomic)
            .describe("The versions served."),
        Field::new(
            "serverAddressByClientCIDRs",
            2,
            Kind::Array(&Kind::Message(&SERVER_ADDRESS_BY_CLIENT_CIDR)),
        )
        .always()
        .list_type(ListType::Atomic)
        .describe("Server addresses by client network, for clients to pick the closest."),
    ],
    required: &["versions", "serverAddressByClientCIDRs"],
    atomic: false,
};

pub static GROUP_VERSION_FOR_DISCOVERY: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.GroupVersionForDiscovery",
    description: "One version of a group, in both spellings.",
    fields: &[
        Field::new("groupVersion", 1, Kind::String)
            .always()
            .describe("As group/version."),
        Field::new("version", 2, Kind::String)
            .always()
            .describe("The version alone."),
    ],
    required: &["groupVersion", "version"],
    atomic: false,
};

pub static SERVER_ADDRESS_BY_CLIENT_CIDR: Message = Message {
    name: "io.k8s.apimachinery.pkg.apis.meta.v1.ServerAddressByClientCIDR",
    description: "The server address clients in a network should use.",
    fields: &[
        Field::new("clientCIDR", 1, Kind::String)
            .always()
            .describe("The clients' network, in CIDR notation."),
        Field::new("serverAddress", 2, Kind::String)
            .always()
            .describe("host:port (or host) for those clients."),
    ],
    required: &["clientCIDR", "serverAddress"],
    atomic: false,
};
