//! [`EtcdStore`]: upstream's etcd3 store (create, get, list, guaranteed update, delete,
//! count) over etcd-client.

mod feature;

pub use feature::{WatchProgressSupport, version_supports_progress_requests};
mod watcher;

use std::sync::Arc;

use async_trait::async_trait;
use etcd_client::{
    Client, Compare, CompareOp, GetOptions as EtcdGet, GetResponse, KeyValue, KvClient, PutOptions,
    Txn, TxnOp, TxnOpResponse, TxnResponse,
};
use kas_storage::latency::{self, Layer};
use kas_storage::{
    Error, GetOptions, ListOptions, ListResult, Object, ObjectRef, Preconditions,
    ResourceVersionMatch, Result, Storage, UpdateFn, ValidateDeletionFn, WatchOptions, WatchStream,
    decode_continue, encode_continue, parse_resource_version,
};
use serde_json::Value;

use crate::client::SharedClient;
use crate::codec::Codec;
use crate::errors::{check_send_size, from_etcd, is_compacted, is_future_revision, list_compacted};
use crate::lease::LeaseManager;
use feature::WatchProgressCheck;

/// Upstream caps the page size it doubles up to when a predicate filters items out.
const MAX_LIMIT: i64 = 10_000;

/// The largest etcd response accepted (upstream: `math.MaxInt32`).
const MAX_MESSAGE_SIZE: usize = i32::MAX as usize;

/// The etcd v3 store. Cheap to clone; clones share the client.
#[derive(Clone)]
pub struct EtcdStore {
    pub(crate) client: SharedClient,
    /// `--etcd-prefix` made absolute, with a trailing `/`.
    pub(crate) path_prefix: Arc<str>,
    /// The leases of writes with a TTL, shared by clones.
    leases: Arc<LeaseManager>,
    /// Whether etcd's watch progress answers are trusted, shared by clones.
    pub(crate) watch_progress: Arc<WatchProgressCheck>,
    /// How objects are written and read (upstream's storage codec), shared by clones.
    codec: Arc<Codec>,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStore")
            .field("path_prefix", &self.path_prefix)
            .finish_non_exhaustive()
    }
}

/// What the compare-and-swap loops know of a key: its object and mod revision.
struct ObjState {
    obj: Option<ObjectRef>,
    /// `obj`'s document (Null when there is none), for preconditions and updates.
    value: Value,
    rev: i64,
    /// Stored otherwise than the current encryption writes (upstream's stale read): an
    /// update must write it even when the document is unchanged, which is how rewriting
    /// every Secret re-encrypts them after a key rotation. Unknown (false) for a cached
    /// state.
    stale: bool,
}

impl EtcdStore {
    /// A store over `client` keeping every key under `prefix` (e.g. `/registry`).
    pub fn new(client: Client, prefix: &str) -> Self {
        let path_prefix = path_prefix(prefix);
        let client = SharedClient::new(client);
        EtcdStore {
            leases: Arc::new(LeaseManager::new(client.clone())),
            watch_progress: Arc::default(),
            codec: Arc::new(Codec::new(&path_prefix)),
            client,
            path_prefix: path_prefix.into(),
        }
    }

    /// The codec: roles register the kinds they write under their keys with it before
    /// they write.
    pub fn codec(&self) -> &Arc<Codec> {
        &self.codec
    }

    /// The client requests go out on now (for tests).
    pub fn client(&self) -> Client {
        self.client.get()
    }

    /// The client the store's parts share, replaced when etcd's TLS files change.
    pub(crate) fn shared_client(&self) -> &SharedClient {
        &self.client
    }

    /// Compacts etcd's history up to `revision` now (what [`crate::Compactor`] does on its
    /// ticks); later reads and watches from older revisions fail as expired.
    pub async fn compact(&self, revision: u64) -> Result<()> {
        let options = etcd_client::CompactionOptions::new().with_physical();
        self.kv()
            .compact(revision as i64, Some(options))
            .await
            .map(|_| ())
            .map_err(|e| from_etcd("compact", e))
    }

    /// Upstream lifts gRPC's 4 MiB receive limit (`MaxCallRecvMsgSize = math.MaxInt32`):
    /// a list of many objects is one etcd response.
    pub(crate) fn kv(&self) -> KvClient {
        self.client
            .get()
            .kv_client()
            .max_decoding_message_size(MAX_MESSAGE_SIZE)
    }

    pub(crate) fn watch_client(&self) -> etcd_client::WatchClient {
        self.client
            .get()
            .watch_client()
            .max_decoding_message_size(MAX_MESSAGE_SIZE)
    }

    /// Upstream's `prepareKey`: refuses `.`/`..` segments and empty keys, then prefixes.
    pub(crate) fn prepare_key(&self, key: &str) -> Result<String> {
        prepare_key(&self.path_prefix, key)
    }

    /// The caller's key for an etcd key (the inverse of `prepare_key`).
    pub(crate) fn user_key(&self, etcd_key: &[u8]) -> String {
        user_key(&self.path_prefix, etcd_key)
    }

    pub(crate) fn decode(&self, kv: &KeyValue, rev: i64) -> Result<(ObjectRef, Value)> {
        let key = self.user_key(kv.key());
        let value = latency::track_fn(Layer::Decode, || self.codec.decode(&key, kv.value()))?;
        Object::new_with_value(key, rev as u64, value).map(|(obj, value)| (Arc::new(obj), value))
    }

    async fn get_raw(&self, prepared: &str) -> Result<GetResponse> {
        latency::track_future(Layer::Storage, self.kv().get(prepared, None))
            .await
            .map_err(|e| from_etcd(prepared, e))
    }

    async fn txn(&self, prepared: &str, txn: Txn) -> Result<TxnResponse> {
        latency::track_future(Layer::Storage, self.kv().txn(txn))
            .await
            .map_err(|e| from_etcd(prepared, e))
    }

    fn state_from(&self, key: &str, kvs: &[KeyValue], ignore_not_found: bool) -> Result<ObjState> {
        match kvs.first() {
            Some(kv) => {
                let (obj, value) = self.decode(kv, kv.mod_revision())?;
                Ok(ObjState {
                    stale: self.codec.is_stale(&obj.key, kv.value()),
                    obj: Some(obj),
                    value,
                    rev: kv.mod_revision(),
                })
            }
            None if ignore_not_found => Ok(ObjState {
                obj: None,
                value: Value::Null,
                rev: 0,
                stale: false,
            }),
            None => Err(Error::NotFound { key: key.into() }),
        }
    }

    async fn current_state(
        &self,
        key: &str,
        prepared: &str,
        ignore_not_found: bool,
    ) -> Result<ObjState> {
        let resp = self.get_raw(prepared).await?;
        self.state_from(key, resp.kvs(), ignore_not_found)
    }

    fn cached_state(cached: ObjectRef) -> Result<ObjState> {
        let value = cached.value()?;
        Ok(ObjState {
            rev: cached.resource_version as i64,
            value,
            obj: Some(cached),
            stale: false,
        })
    }

    /// A put under a lease of `ttl` seconds (one shared with other recent writes), or a
    /// plain put, which takes the key out of any lease it had.
    async fn put_options(&self, ttl: Option<i64>) -> Result<Option<PutOptions>> {
        match ttl.filter(|&t| t > 0) {
            Some(ttl) => {
                let lease = self.leases.get_lease(ttl).await?;
                Ok(Some(PutOptions::new().with_lease(lease)))
            }
            None => Ok(None),
        }
    }

    /// Writes `data` if the key is still at `rev`; otherwise reads it in the `else` branch.
    async fn put_if_unchanged(
        &self,
        prepared: &str,
        rev: i64,
        data: Vec<u8>,
        ttl: Option<i64>,
    ) -> Result<TxnResponse> {
        check_send_size(prepared, &data)?;
        let put = self.put_options(ttl).await?;
        let txn = Txn::new()
            .when([Compare::mod_revision(prepared, CompareOp::Equal, rev)])
            .and_then([TxnOp::put(prepared, data, put)])
            .or_else([TxnOp::get(prepared, None)]);
        self.txn(prepared, txn).await
    }

    /// The state a failed compare-and-swap read in its `else` branch.
    fn state_from_else(
        &self,
        key: &str,
        resp: &TxnResponse,
        ignore_not_found: bool,
    ) -> Result<ObjState> {
        match resp.op_responses().into_iter().next() {
            Some(TxnOpResponse::Get(get)) => self.state_from(key, get.kvs(), ignore_not_found),
            _ => Err(Error::internal("etcd txn: missing range response")),
        }
    }
}

/// `--etcd-prefix` as upstream normalizes it: absolute, ending in `/`.
fn path_prefix(prefix: &str) -> String {
    let mut path_prefix = format!("/{}", prefix.trim_matches('/'));
    if !path_prefix.ends_with('/') {
        path_prefix.push('/');
    }
    path_prefix
}

fn prepare_key(path_prefix: &str, key: &str) -> Result<String> {
    if key.split('/').any(|s| s == "." || s == "..") {
        return Err(Error::BadRequest(format!("invalid key: {key:?}")));
    }
    if key.is_empty() || key == "/" {
        return Err(Error::BadRequest(format!("empty key: {key:?}")));
    }
    Ok(format!(
        "{path_prefix}{}",
        key.strip_prefix('/').unwrap_or(key)
    ))
}

fn user_key(path_prefix: &str, etcd_key: &[u8]) -> String {
    let key = String::from_utf8_lossy(etcd_key);
    let rest = key.strip_prefix(path_prefix).unwrap_or(&key);
    format!("/{rest}")
}

fn header_revision(resp: Option<&etcd_client::ResponseHeader>) -> u64 {
    resp.map_or(0, |h| h.revision().max(0) as u64)
}

/// Upstream's `validateMinimumResourceVersion`.
fn validate_minimum(rv: Option<&str>, actual: u64) -> Result<()> {
    let Some(rv) = rv.filter(|rv| !rv.is_empty()) else {
        return Ok(());
    };
    let minimum = parse_resource_version(rv)?;
    if minimum > actual {
        return Err(Error::TooLargeResourceVersion {
            requested: minimum,
            current: actual,
            retry_after_seconds: 1,
        });
    }
    Ok(())
}

/// `prefix` with its last byte incremented: the end of etcd's prefix range.
pub(crate) fn prefix_range_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// Whether two documents are the same object state: equal but for
/// `metadata.resourceVersion`, which is never stored.
fn same_document(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    a.len() == b.len()
        && a.iter().all(|(k, v)| match (k.as_str(), b.get(k)) {
            (_, None) => false,
            ("metadata", Some(w)) => match (v.as_object(), w.as_object()) {
                (Some(m), Some(n)) => {
                    let rv = |m: &serde_json::Map<String, Value>| {
                        m.contains_key("resourceVersion") as usize
                    };
                    m.len() - rv(m) == n.len() - rv(n)
                        && m.iter()
                            .filter(|(k, _)| *k != "resourceVersion")
                            .all(|(k, v)| n.get(k) == Some(v))
                }
                _ => v == w,
            },
            (_, Some(w)) => v == w,
        })
}

#[async_trait]
impl Storage for EtcdStore {
    async fn create(&self, key: &str, value: Value, ttl_seconds: Option<i64>) -> Result<ObjectRef> {
        let prepared = self.prepare_key(key)?;
        let rv = value
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .and_then(|rv| parse_resource_version(rv).ok());
        if rv.is_some_and(|rv| rv != 0) {
            return Err(Error::internal(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let data = self.codec.encode(key, &value)?;
        check_send_size(&prepared, &data)?;
        let put = self.put_options(ttl_seconds).await?;
        let txn = Txn::new()
            .when([Compare::mod_revision(
                prepared.as_str(),
                CompareOp::Equal,
                0,
            )])
            .and_then([TxnOp::put(prepared.as_str(), data, put)]);
        let resp = self.txn(&prepared, txn).await?;
        if !resp.succeeded() {
            return Err(Error::KeyExists { key: key.into() });
        }
        Object::new(key, header_revision(resp.header()), value).map(Arc::new)
    }

    async fn get(&self, key: &str, opts: &GetOptions) -> Result<Option<ObjectRef>> {
        let prepared = self.prepare_key(key)?;
        let resp = self.get_raw(&prepared).await?;
        validate_minimum(
            opts.resource_version.as_deref(),
            header_revision(resp.header()),
        )?;
        match resp.kvs().first() {
            Some(kv) => Ok(Some(self.decode(kv, kv.mod_revision())?.0)),
            None if opts.ignore_not_found => Ok(None),
            None => Err(Error::NotFound { key: key.into() }),
        }
    }

    async fn list(&self, key: &str, opts: &ListOptions) -> Result<ListResult> {
        self.get_list(key, opts).await
    }

    async fn guaranteed_update(
        &self,
        key: &str,
        preconditions: &Preconditions,
        ignore_not_found: bool,
        try_update: &UpdateFn<'_>,
        cached_existing: Option<ObjectRef>,
        ttl_seconds: Option<i64>,
    ) -> Result<ObjectRef> {
        self.update(
            key,
            preconditions,
            ignore_not_found,
            try_update,
            cached_existing,
            ttl_seconds,
        )
        .await
    }

    async fn delete(
        &self,
        key: &str,
        preconditions: &Preconditions,
        validate_deletion: &ValidateDeletionFn<'_>,
        cached_existing: Option<ObjectRef>,
    ) -> Result<ObjectRef> {
        let prepared = self.prepare_key(key)?;
        let (mut orig, mut orig_is_current) = match cached_existing {
            Some(cached) => (Self::cached_state(cached)?, false),
            None => (self.current_state(key, &prepared, false).await?, true),
        };
        loop {
            let Some(obj) = orig.obj.clone() else {
                return Err(Error::NotFound { key: key.into() });
            };
            let checked = preconditions
                .check(key, &orig.value)
                .and_then(|()| validate_deletion(&obj));
            if let Err(e) = checked {
                if orig_is_current {
                    return Err(e);
                }
                // Possibly stale: decide on etcd's state instead.
                let cached_rev = orig.rev;
                orig = self.current_state(key, &prepared, false).await?;
                orig_is_current = true;
                if cached_rev == orig.rev {
                    return Err(e);
                }
                continue;
            }
            let txn = Txn::new()
                .when([Compare::mod_revision(
                    prepared.as_str(),
                    CompareOp::Equal,
                    orig.rev,
                )])
                .and_then([TxnOp::delete(prepared.as_str(), None)])
                .or_else([TxnOp::get(prepared.as_str(), None)]);
            let resp = self.txn(&prepared, txn).await?;
            if !resp.succeeded() {
                orig = self.state_from_else(key, &resp, false)?;
                orig_is_current = true;
                continue;
            }
            return obj
                .with_resource_version(header_revision(resp.header()))
                .map(Arc::new);
        }
    }

    async fn watch(&self, key: &str, opts: &WatchOptions) -> Result<WatchStream> {
        watcher::watch(self, key, opts).await
    }

    async fn count(&self, key: &str) -> Result<i64> {
        let mut prepared = self.prepare_key(key)?;
        if !prepared.ends_with('/') {
            prepared.push('/');
        }
        let options = EtcdGet::new()
            .with_range(prefix_range_end(&prepared))
            .with_count_only();
        let resp = self
            .kv()
            .get(prepared.as_str(), Some(options))
            .await
            .map_err(|e| from_etcd(&prepared, e))?;
        Ok(resp.count())
    }

    async fn current_revision(&self) -> Result<u64> {
        let options = EtcdGet::new().with_count_only();
        let resp = self
            .kv()
            .get(&*self.path_prefix, Some(options))
            .await
            .map_err(|e| from_etcd(&self.path_prefix, e))?;
        Ok(header_revision(resp.header()))
    }

    async fn request_watch_progress_supported(&self) -> bool {
        self.watch_progress.supported(self).await
    }
}

impl EtcdStore {
    /// Upstream's `GuaranteedUpdate`: the write, if any, under a lease of `ttl` seconds.
    async fn update(
        &self,
        key: &str,
        preconditions: &Preconditions,
        ignore_not_found: bool,
        try_update: &UpdateFn<'_>,
        cached_existing: Option<ObjectRef>,
        ttl: Option<i64>,
    ) -> Result<ObjectRef> {
        let prepared = self.prepare_key(key)?;
        let (mut orig, mut orig_is_current) = match cached_existing {
            Some(cached) => (Self::cached_state(cached)?, false),
            None => (
                self.current_state(key, &prepared, ignore_not_found).await?,
                true,
            ),
        };
        loop {
            if let Err(e) = preconditions.check(key, &orig.value) {
                if orig_is_current {
                    return Err(e);
                }
                orig = self.current_state(key, &prepared, ignore_not_found).await?;
                orig_is_current = true;
                continue;
            }
            let new_value = match try_update(orig.obj.as_ref().map(|_| &orig.value)) {
                Ok(v) => v,
                Err(e) if orig_is_current => return Err(e),
                Err(e) => {
                    let cached_rev = orig.rev;
                    orig = self.current_state(key, &prepared, ignore_not_found).await?;
                    orig_is_current = true;
                    if cached_rev == orig.rev {
                        return Err(e);
                    }
                    continue;
                }
            };
            let new_value = match new_value {
                Some(v) => v,
                None => match &orig.obj {
                    Some(_) => orig.value.clone(),
                    None => return Err(Error::NotFound { key: key.into() }),
                },
            };
            // Upstream compares the encoded bytes before encryption; the documents say the
            // same without encoding the stored one again.
            if orig.obj.is_some() && same_document(&new_value, &orig.value) {
                // Nothing to write; but a cached state must be confirmed against etcd first.
                if !orig_is_current {
                    orig = self.current_state(key, &prepared, ignore_not_found).await?;
                    orig_is_current = true;
                    if orig.stale || !same_document(&new_value, &orig.value) {
                        continue;
                    }
                }
                if let Some(obj) = orig.obj.as_ref().filter(|_| !orig.stale) {
                    return Ok(obj.clone());
                }
            }
            let data = self.codec.encode(key, &new_value)?;
            let resp = self
                .put_if_unchanged(&prepared, orig.rev, data, ttl)
                .await?;
            if !resp.succeeded() {
                orig = self.state_from_else(key, &resp, ignore_not_found)?;
                orig_is_current = true;
                continue;
            }
            return Object::new(key, header_revision(resp.header()), new_value).map(Arc::new);
        }
    }

    /// Upstream's `GetList`, paging through etcd until the page is full.
    async fn get_list(&self, key: &str, opts: &ListOptions) -> Result<ListResult> {
        let mut prepared = self.prepare_key(key)?;
        if opts.recursive && !prepared.ends_with('/') {
            prepared.push('/');
        }
        let key_prefix = prepared.clone();
        let limit = opts.limit.filter(|&l| l > 0 && opts.recursive);
        let from_rv = match opts.resource_version.as_deref() {
            Some(rv) if !rv.is_empty() => Some(parse_resource_version(rv)?),
            _ => None,
        };
        let mut with_rev: i64 = 0;
        let mut continue_key: Option<String> = None;
        match opts.continue_token.as_deref().filter(|c| !c.is_empty()) {
            Some(token) if opts.recursive => {
                let (start, rv) = decode_continue(token, &key_prefix)?;
                if from_rv.is_some_and(|rv| rv != 0) {
                    return Err(Error::BadRequest(
                        "specifying resource version is not allowed when using continue".into(),
                    ));
                }
                prepared = start.clone();
                continue_key = Some(start);
                if rv > 0 {
                    with_rev = rv;
                }
            }
            _ => match (from_rv, opts.resource_version_match) {
                (Some(rv), Some(ResourceVersionMatch::Exact)) => with_rev = rv as i64,
                (Some(rv), None) if limit.is_some() && rv > 0 => with_rev = rv as i64,
                _ => {}
            },
        }

        let mut page_limit = limit.unwrap_or(0);
        let mut items: Vec<ObjectRef> = Vec::new();
        let mut last_key: Vec<u8> = Vec::new();
        let mut has_more;
        let mut count;
        let mut header_rev;
        loop {
            let mut options = EtcdGet::new();
            if opts.recursive {
                options = options.with_range(prefix_range_end(&key_prefix));
            }
            if page_limit > 0 {
                options = options.with_limit(page_limit);
            }
            if with_rev != 0 {
                options = options.with_revision(with_rev);
            }
            let mut kv = self.kv();
            let page = kv.get(prepared.as_str(), Some(options));
            let mut resp = match latency::track_future(Layer::Storage, page).await {
                Ok(resp) => resp,
                Err(e) if is_compacted(&e) => {
                    let ck = continue_key.as_deref().map(|k| (k, key_prefix.as_str()));
                    return Err(list_compacted(from_rv, ck));
                }
                Err(e) if is_future_revision(&e) => {
                    return Err(Error::TooLargeResourceVersion {
                        requested: with_rev as u64,
                        current: self.current_revision().await?,
                        retry_after_seconds: 1,
                    });
                }
                Err(e) => return Err(from_etcd(&prepared, e)),
            };
            header_rev = header_revision(resp.header());
            validate_minimum(opts.resource_version.as_deref(), header_rev)?;
            has_more = resp.more();
            count = resp.count();
            let kvs = resp.take_kvs();
            if kvs.is_empty() && has_more {
                return Err(Error::internal(
                    "no results were found, but etcd indicated there were more values remaining",
                ));
            }
            for kv in &kvs {
                if limit.is_some_and(|l| items.len() as i64 >= l) {
                    has_more = true;
                    break;
                }
                last_key = kv.key().to_vec();
                let (obj, value) = self.decode(kv, kv.mod_revision())?;
                if opts.predicate.matches(&value) {
                    items.push(obj);
                }
            }
            let Some(limit) = limit else { break };
            if !has_more || items.len() as i64 >= limit {
                break;
            }
            // A predicate dropped items: fetch more, in bigger pages, at the same revision.
            page_limit = (page_limit * 2).min(MAX_LIMIT);
            prepared = format!("{}\0", String::from_utf8_lossy(&last_key));
            if with_rev == 0 {
                with_rev = header_rev as i64;
            }
        }
        if with_rev == 0 {
            with_rev = header_rev as i64;
        }
        let mut result = ListResult {
            items,
            resource_version: with_rev as u64,
            continue_token: None,
            remaining_item_count: None,
        };
        if has_more {
            let next = format!("{}\0", String::from_utf8_lossy(&last_key));
            result.continue_token = Some(encode_continue(&next, &key_prefix, with_rev)?);
            if opts.predicate.is_empty() {
                result.remaining_item_count = Some(count - limit.unwrap_or(0));
            }
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_range_end_increments_the_last_byte() {
        assert_eq!(prefix_range_end("/a/"), b"/a0");
        assert_eq!(prefix_range_end("a\u{7f}"), b"a\x80".to_vec());
    }

    #[test]
    fn keys_are_prefixed_and_checked_like_upstream() {
        let prefix = path_prefix("registry/");
        assert_eq!(prefix, "/registry/");
        assert_eq!(path_prefix("/"), "/");
        assert_eq!(
            prepare_key(&prefix, "/pods/ns/a").unwrap(),
            "/registry/pods/ns/a"
        );
        assert_eq!(prepare_key(&prefix, "pods").unwrap(), "/registry/pods");
        assert_eq!(user_key(&prefix, b"/registry/pods/ns/a"), "/pods/ns/a");
        for bad in ["", "/", "..", "/a/../b", "./a", "/a/."] {
            assert!(
                matches!(prepare_key(&prefix, bad), Err(Error::BadRequest(_))),
                "{bad}"
            );
        }
    }
}
