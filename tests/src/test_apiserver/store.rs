//! Objects in memory: one resourceVersion counter for all of them, a bounded history of
//! changes for watches that start at a resourceVersion, and a broadcast of new changes.
//! Writes send their event under the store's lock, so a watch that subscribes under it
//! sees every change after its snapshot exactly once.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::api::{
    ANNOTATION_EXTRA, ANNOTATION_GROUPS, ANNOTATION_UID, ANNOTATION_UPDATED_BY, ANNOTATION_USER,
    Resource,
};
use super::auth::User;

/// How many changes a watch may start behind.
const HISTORY: usize = 10_000;

#[derive(Debug, PartialEq, Eq)]
pub enum Error {
    NotFound,
    AlreadyExists,
    /// A resourceVersion precondition failed.
    Conflict,
    /// A field is missing or wrong: `(field path, upstream's field error)`.
    Invalid(String, String),
    BadRequest(String),
    /// The watch starts before the history kept: `(asked, oldest kept)`.
    Expired(u64, u64),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Event {
    pub kind: EventType,
    pub resource: &'static str,
    pub namespace: String,
    pub rv: u64,
    pub object: Arc<Value>,
}

type Key = (&'static str, String, String);

#[derive(Default)]
struct Inner {
    rv: u64,
    objects: BTreeMap<Key, Arc<Value>>,
    history: VecDeque<Event>,
}

/// Where a watch starts and what it was given.
pub struct WatchStart {
    pub initial: Vec<Event>,
    pub live: broadcast::Receiver<Event>,
}

pub struct Store {
    inner: Mutex<Inner>,
    events: broadcast::Sender<Event>,
}

impl Default for Store {
    fn default() -> Self {
        Store::new()
    }
}

impl Store {
    pub fn new() -> Store {
        Store {
            inner: Mutex::new(Inner::default()),
            events: broadcast::channel(4096).0,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates `object` (metadata already checked by the caller against the URL), stamped
    /// with a uid, creationTimestamp, resourceVersion and `user`.
    pub fn create(
        &self,
        r: &'static Resource,
        ns: &str,
        mut object: Value,
        user: &User,
    ) -> Result<Value> {
        let mut inner = self.lock();
        let name = match meta_str(&object, "name") {
            Some(n) if !n.is_empty() => n.to_owned(),
            _ => match meta_str(&object, "generateName") {
                Some(prefix) if !prefix.is_empty() => generate_name(prefix),
                _ => {
                    let cause = "Required value: name or generateName is required";
                    return Err(Error::Invalid("metadata.name".into(), cause.into()));
                }
            },
        };
        let key = (r.plural, ns.to_owned(), name.clone());
        if inner.objects.contains_key(&key) {
            return Err(Error::AlreadyExists);
        }
        inner.rv += 1;
        let meta = metadata(&mut object);
        meta.insert("name".into(), json!(name));
        meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
        meta.insert("resourceVersion".into(), json!(inner.rv.to_string()));
        meta.insert("creationTimestamp".into(), json!(now()));
        stamp_creator(meta, user);
        let object = Arc::new(object);
        inner.objects.insert(key, object.clone());
        self.record(&mut inner, EventType::Added, r, ns, object.clone());
        Ok((*object).clone())
    }

    pub fn get(&self, r: &'static Resource, ns: &str, name: &str) -> Result<Value> {
        let key = (r.plural, ns.to_owned(), name.to_owned());
        self.lock()
            .objects
            .get(&key)
            .map(|o| (**o).clone())
            .ok_or(Error::NotFound)
    }

    /// The objects of `ns` (every namespace when `None`) and the current resourceVersion.
    pub fn list(&self, r: &'static Resource, ns: Option<&str>) -> (Vec<Value>, u64) {
        let inner = self.lock();
        let items = inner
            .objects
            .iter()
            .filter(|((res, n, _), _)| *res == r.plural && ns.is_none_or(|ns| ns == n))
            .map(|(_, o)| (**o).clone())
            .collect();
        (items, inner.rv)
    }

    /// Replaces the object with what `change` makes of it; a resourceVersion in the new
    /// object must be the current one. Keeps uid, creationTimestamp and the creator.
    pub fn update(
        &self,
        r: &'static Resource,
        ns: &str,
        name: &str,
        user: &User,
        change: impl FnOnce(&Value) -> Result<Value>,
    ) -> Result<Value> {
        let mut inner = self.lock();
        let key = (r.plural, ns.to_owned(), name.to_owned());
        let old = inner.objects.get(&key).cloned().ok_or(Error::NotFound)?;
        let mut object = change(&old)?;
        let current = meta_str(&old, "resourceVersion").unwrap_or("").to_owned();
        match meta_str(&object, "resourceVersion") {
            Some(rv) if !rv.is_empty() && rv != current => return Err(Error::Conflict),
            _ => {}
        }
        inner.rv += 1;
        let old_meta = old.get("metadata").cloned().unwrap_or(json!({}));
        let meta = metadata(&mut object);
        for field in ["name", "namespace", "uid", "creationTimestamp"] {
            match old_meta.get(field) {
                Some(v) => meta.insert(field.into(), v.clone()),
                None => meta.remove(field),
            };
        }
        meta.insert("resourceVersion".into(), json!(inner.rv.to_string()));
        let annotations = annotations(meta);
        for key in [
            ANNOTATION_USER,
            ANNOTATION_UID,
            ANNOTATION_GROUPS,
            ANNOTATION_EXTRA,
        ] {
            match old_meta.get("annotations").and_then(|a| a.get(key)) {
                Some(v) => annotations.insert(key.into(), v.clone()),
                None => annotations.remove(key),
            };
        }
        annotations.insert(ANNOTATION_UPDATED_BY.into(), json!(user.name));
        let object = Arc::new(object);
        inner.objects.insert(key, object.clone());
        self.record(&mut inner, EventType::Modified, r, ns, object.clone());
        Ok((*object).clone())
    }

    /// Deletes the object and returns it as it was last.
    pub fn delete(&self, r: &'static Resource, ns: &str, name: &str) -> Result<Value> {
        let mut inner = self.lock();
        let key = (r.plural, ns.to_owned(), name.to_owned());
        let old = inner.objects.remove(&key).ok_or(Error::NotFound)?;
        inner.rv += 1;
        let mut gone = (*old).clone();
        metadata(&mut gone).insert("resourceVersion".into(), json!(inner.rv.to_string()));
        self.record(&mut inner, EventType::Deleted, r, ns, Arc::new(gone));
        Ok((*old).clone())
    }

    /// Starts a watch of `r` in `ns` (every namespace when `None`): from `since` (the
    /// changes after it), or, without one, synthetic ADDED events for what exists now.
    pub fn watch(
        &self,
        r: &'static Resource,
        ns: Option<&str>,
        since: Option<u64>,
    ) -> Result<WatchStart> {
        let inner = self.lock();
        let live = self.events.subscribe();
        let wanted = |e: &Event| e.resource == r.plural && ns.is_none_or(|ns| ns == e.namespace);
        let initial = match since {
            None | Some(0) => inner
                .objects
                .iter()
                .filter(|((res, n, _), _)| *res == r.plural && ns.is_none_or(|ns| ns == n))
                .map(|((res, n, _), o)| Event {
                    kind: EventType::Added,
                    resource: res,
                    namespace: n.clone(),
                    rv: inner.rv,
                    object: o.clone(),
                })
                .collect(),
            Some(rv) => {
                let oldest = inner.history.front().map_or(inner.rv + 1, |e| e.rv);
                if rv + 1 < oldest && inner.history.len() == HISTORY {
                    return Err(Error::Expired(rv, oldest));
                }
                inner
                    .history
                    .iter()
                    .filter(|e| e.rv > rv && wanted(e))
                    .cloned()
                    .collect()
            }
        };
        Ok(WatchStart { initial, live })
    }

    fn record(
        &self,
        inner: &mut Inner,
        kind: EventType,
        r: &'static Resource,
        ns: &str,
        object: Arc<Value>,
    ) {
        let event = Event {
            kind,
            resource: r.plural,
            namespace: ns.to_owned(),
            rv: inner.rv,
            object,
        };
        if inner.history.len() == HISTORY {
            inner.history.pop_front();
        }
        inner.history.push_back(event.clone());
        let _ = self.events.send(event);
    }
}

fn meta_str<'a>(object: &'a Value, field: &str) -> Option<&'a str> {
    object.get("metadata")?.get(field)?.as_str()
}

/// `object.metadata`, made an object if it was missing or not one.
fn metadata(object: &mut Value) -> &mut serde_json::Map<String, Value> {
    if !object.is_object() {
        *object = json!({});
    }
    if !object["metadata"].is_object() {
        object["metadata"] = json!({});
    }
    object["metadata"]
        .as_object_mut()
        .expect("metadata was made an object")
}

fn annotations(meta: &mut serde_json::Map<String, Value>) -> &mut serde_json::Map<String, Value> {
    let entry = meta.entry("annotations").or_insert_with(|| json!({}));
    if !entry.is_object() {
        *entry = json!({});
    }
    entry
        .as_object_mut()
        .expect("annotations was made an object")
}

fn stamp_creator(meta: &mut serde_json::Map<String, Value>, user: &User) {
    let annotations = annotations(meta);
    annotations.insert(ANNOTATION_USER.into(), json!(user.name));
    annotations.remove(ANNOTATION_UID);
    if !user.uid.is_empty() {
        annotations.insert(ANNOTATION_UID.into(), json!(user.uid));
    }
    annotations.insert(
        ANNOTATION_GROUPS.into(),
        json!(json!(user.groups).to_string()),
    );
    annotations.insert(
        ANNOTATION_EXTRA.into(),
        json!(json!(user.extra).to_string()),
    );
}

/// `prefix` and five characters of upstream's `generateName` alphabet.
fn generate_name(prefix: &str) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let random = uuid::Uuid::new_v4();
    let suffix: String = random.as_bytes()[..5]
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect();
    format!("{prefix}{suffix}")
}

fn now() -> String {
    let t = kas_apimachinery::golang::time::Time::from_system_time(std::time::SystemTime::now());
    kas_apimachinery::golang::time::format_rfc3339(t)
}

#[cfg(test)]
mod tests {
    use super::super::api::FLUNDERS;
    use super::*;

    fn alice() -> User {
        User {
            name: "alice".into(),
            uid: "u1".into(),
            groups: vec!["g".into()],
            extra: BTreeMap::from([("scopes".to_owned(), vec!["a".to_owned()])]),
        }
    }

    fn create(store: &Store, ns: &str, name: &str) {
        let object = json!({"metadata": {"name": name}});
        store.create(&FLUNDERS, ns, object, &alice()).unwrap();
    }

    #[test]
    fn create_stamps_identity_and_versions_and_refuses_a_second() {
        let store = Store::new();
        let obj = json!({"metadata": {"name": "a", "annotations": {"kas.test/user": "mallory"}}});
        let created = store
            .create(&FLUNDERS, "ns", obj.clone(), &alice())
            .unwrap();
        let a = &created["metadata"]["annotations"];
        assert_eq!(a["kas.test/user"], "alice");
        assert_eq!(a["kas.test/groups"], r#"["g"]"#);
        assert_eq!(a["kas.test/extra"], r#"{"scopes":["a"]}"#);
        assert_eq!(created["metadata"]["resourceVersion"], "1");
        assert_eq!(
            store.create(&FLUNDERS, "ns", obj, &alice()),
            Err(Error::AlreadyExists)
        );
        let generated = json!({"metadata": {"generateName": "x-"}});
        let g = store.create(&FLUNDERS, "ns", generated, &alice()).unwrap();
        assert_eq!(g["metadata"]["name"].as_str().unwrap().len(), 7);
    }

    #[test]
    fn update_checks_the_resource_version_and_keeps_the_creator() {
        let store = Store::new();
        create(&store, "ns", "a");
        let bob = User {
            name: "bob".into(),
            ..User::default()
        };
        let stale = |_: &Value| Ok(json!({"metadata": {"name": "a", "resourceVersion": "7"}}));
        assert_eq!(
            store.update(&FLUNDERS, "ns", "a", &bob, stale).unwrap_err(),
            Error::Conflict
        );
        let fresh =
            |_: &Value| Ok(json!({"metadata": {"name": "a", "resourceVersion": "1"}, "spec": {}}));
        let updated = store.update(&FLUNDERS, "ns", "a", &bob, fresh).unwrap();
        assert_eq!(updated["metadata"]["resourceVersion"], "2");
        assert_eq!(updated["metadata"]["annotations"]["kas.test/user"], "alice");
        assert_eq!(
            updated["metadata"]["annotations"]["kas.test/updated-by"],
            "bob"
        );
    }

    #[test]
    fn a_watch_from_a_list_sees_only_later_changes() {
        let store = Store::new();
        create(&store, "ns", "a");
        let (_, rv) = store.list(&FLUNDERS, Some("ns"));
        create(&store, "other", "b");
        store.delete(&FLUNDERS, "ns", "a").unwrap();
        let start = store.watch(&FLUNDERS, Some("ns"), Some(rv)).unwrap();
        let kinds: Vec<EventType> = start.initial.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [EventType::Deleted]);
        let all = store.watch(&FLUNDERS, None, None).unwrap();
        assert_eq!(all.initial.len(), 1, "b exists");
    }
}
