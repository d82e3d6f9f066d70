//! The parameters of upstream's operations: the path parameters, `pretty`, and the query
//! parameters upstream derives from the fields of its options types (`ListOptions`,
//! `CreateOptions`, `UpdateOptions`, `PatchOptions`, `DeleteOptions`). Names and types are
//! upstream's; kubectl looks `fieldValidation` up by name on PATCH operations to decide
//! that the server validates fields itself.

/// Where a parameter travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Location {
    Path,
    Query,
}

impl Location {
    pub fn as_str(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
        }
    }
}

/// A path or query parameter (bodies are described apart, as OpenAPI 3.0 does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub location: Location,
    /// `string`, `integer` or `boolean`: upstream writes no format for parameters.
    pub type_: &'static str,
    pub description: String,
    pub required: bool,
}

const fn query(name: &'static str, type_: &'static str, description: &'static str) -> Query {
    Query {
        name,
        type_,
        description,
    }
}

/// A query parameter as data.
pub struct Query {
    name: &'static str,
    type_: &'static str,
    description: &'static str,
}

impl Query {
    fn param(&self) -> Param {
        Param {
            name: self.name,
            location: Location::Query,
            type_: self.type_,
            description: self.description.to_owned(),
            required: false,
        }
    }
}

pub const PRETTY: Query = query(
    "pretty",
    "string",
    "When 'true', the response is indented for reading. Browsers and command-line HTTP tools \
     (curl, wget) get indented output unless they ask otherwise.",
);

/// `ListOptions`, in upstream's field order.
const LIST_OPTIONS: &[Query] = &[
    query(
        "labelSelector",
        "string",
        "Only objects whose labels match this selector. Everything when unset.",
    ),
    query(
        "fieldSelector",
        "string",
        "Only objects whose fields match this selector. Everything when unset.",
    ),
    query(
        "watch",
        "boolean",
        "Stream additions, updates and deletions of the selected objects instead of listing \
         them. Start from a resourceVersion to miss nothing.",
    ),
    query(
        "allowWatchBookmarks",
        "boolean",
        "Ask for BOOKMARK events, which carry only a resourceVersion. The server sends them at \
         its own pace, if at all; ignored unless watching.",
    ),
    query(
        "resourceVersion",
        "string",
        "Which versions of the objects the request may be served from; see the API \
         concepts documentation on resource versions. Unset by default.",
    ),
    query(
        "resourceVersionMatch",
        "string",
        "How resourceVersion applies to a list: NotOlderThan or Exact. Recommended whenever \
         resourceVersion is set on a list. Unset by default.",
    ),
    query(
        "timeoutSeconds",
        "integer",
        "Ends the list or watch after this many seconds, whatever happens meanwhile.",
    ),
    query(
        "limit",
        "integer",
        "At most this many objects per answer. When more exist, the list metadata carries a \
         continue token for the next page; pages of one list form a consistent snapshot. \
         Fewer (even none) may come back when a filter drops objects, so only an empty \
         continue token means the end. Not supported with watch.",
    ),
    query(
        "continue",
        "string",
        "The continue token of the previous page, to get the next one with otherwise \
         identical parameters. An expired token is answered with 410 ResourceExpired, which \
         carries a token to go on inconsistently from the latest state; a consistent list \
         must start over. Not supported with watch.",
    ),
    query(
        "sendInitialEvents",
        "boolean",
        "With watch=true, begin with synthetic ADDED events for the current state and a \
         BOOKMARK annotated k8s.io/initial-events-end once they are all sent. Needs \
         resourceVersionMatch=NotOlderThan and allowWatchBookmarks.",
    ),
];

const DRY_RUN: Query = query(
    "dryRun",
    "string",
    "When All, every stage of the request runs but nothing is persisted. Any other value is \
     rejected.",
);

const FIELD_MANAGER: Query = query(
    "fieldManager",
    "string",
    "The name of the actor making the change, recorded in managedFields: at most 128 \
     printable characters.",
);

const PATCH_FIELD_MANAGER: Query = query(
    "fieldManager",
    "string",
    "The name of the actor making the change, recorded in managedFields: at most 128 \
     printable characters. Required for apply patches (application/apply-patch+yaml), \
     optional for the other patch types.",
);

const FIELD_VALIDATION: Query = query(
    "fieldValidation",
    "string",
    "What to do with unknown or duplicate fields in the body of a POST, PUT or PATCH. \
     Ignore: drop unknown fields and keep the last of duplicates silently. Warn (the \
     default): do the same but report each one in a Warning header. Strict: fail the \
     request with a BadRequest listing every unknown and duplicate field.",
);

const FORCE: Query = query(
    "force",
    "boolean",
    "For apply patches only: take ownership of fields other managers own instead of \
     failing with a conflict. Must be unset for the other patch types.",
);

/// `DeleteOptions`, in upstream's field order (`preconditions` is a struct: body only).
const DELETE_OPTIONS: &[Query] = &[
    query(
        "gracePeriodSeconds",
        "integer",
        "Seconds before the object is deleted; zero deletes at once. Unset uses the \
         default of the object's kind.",
    ),
    query(
        "orphanDependents",
        "boolean",
        "Deprecated in favour of propagationPolicy: whether dependents are orphaned (the \
         orphan finalizer is added or removed). Set at most one of the two.",
    ),
    query(
        "propagationPolicy",
        "string",
        "How the garbage collector treats dependents: Orphan leaves them, Background \
         deletes them after the object, Foreground deletes them before it. Unset uses the \
         finalizers of the object and the default of its kind.",
    ),
    DRY_RUN,
    query(
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        "boolean",
        "Deletes an object that cannot be read from storage (corrupt or undecryptable) \
         without running admission or finalizers. Dangerous: it can break workloads that \
         depend on the object. Needs the unsafe-delete-ignore-read-errors permission.",
    ),
];

fn params(list: &[Query], except: &[&str]) -> Vec<Param> {
    list.iter()
        .filter(|q| !except.contains(&q.name))
        .map(Query::param)
        .collect()
}

/// `pretty` alone: every operation has it.
pub fn pretty() -> Vec<Param> {
    vec![PRETTY.param()]
}

/// The query parameters of a list, watch or deletecollection, less `except`.
pub fn list_options(except: &[&str]) -> Vec<Param> {
    params(LIST_OPTIONS, except)
}

/// `GetOptions`: its one field, `resourceVersion`, described as ListOptions' is (as
/// upstream describes both).
pub fn get_options() -> Vec<Param> {
    LIST_OPTIONS
        .iter()
        .filter(|q| q.name == "resourceVersion")
        .map(Query::param)
        .collect()
}

/// Create and update (PUT).
pub fn write_options() -> Vec<Param> {
    vec![
        DRY_RUN.param(),
        FIELD_MANAGER.param(),
        FIELD_VALIDATION.param(),
    ]
}

pub fn patch_options() -> Vec<Param> {
    vec![
        DRY_RUN.param(),
        FORCE.param(),
        PATCH_FIELD_MANAGER.param(),
        FIELD_VALIDATION.param(),
    ]
}

pub fn delete_options() -> Vec<Param> {
    params(DELETE_OPTIONS, &[])
}

/// `{namespace}`.
pub fn namespace() -> Param {
    Param {
        name: "namespace",
        location: Location::Path,
        type_: "string",
        description: "The namespace the object lives in; names are unique within it.".into(),
        required: true,
    }
}

/// `{name}` of an object of `kind`.
pub fn name(kind: &str) -> Param {
    Param {
        name: "name",
        location: Location::Path,
        type_: "string",
        description: format!("The name of the {kind}."),
        required: true,
    }
}
