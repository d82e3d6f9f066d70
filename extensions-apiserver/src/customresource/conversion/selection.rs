//! Selectors on a converted version. Upstream keeps a cache per served version, holding
//! that version's form, so a label or field selector is evaluated on the form the client
//! asked for (a field selectable in `v2` may live elsewhere in the stored `v1`). Here one
//! cache holds the storage version, so a [`super::storage::ConvertingStorage`] asked for a
//! selection reads everything under the key, converts it and selects on the result:
//! - a list fills its page (a `limit` counts the selected objects, its continue token
//!   resumes after the last one returned, as upstream's);
//! - a watch keeps the served form of the objects it has reported as selected, so that a
//!   change moving an object out of the selection is a DELETED event of its previous
//!   state stamped with the change's revision, and one moving it in is ADDED, as
//!   upstream's cache watcher decides them. A watch that does not start with the current
//!   state as ADDED events first lists the state it starts from.
//!
//! Lists and watches without a selector are not affected.

use std::collections::HashMap;
use std::sync::Arc;

use kas_storage::{
    ListOptions, ListResult, ObjectRef, Predicate, ResourceVersionMatch, Result, WatchEvent,
    WatchOptions, encode_continue,
};

use super::storage::ConvertingStorage;

/// A list of `key` through `this`, selected on the served form.
pub(super) async fn list(
    this: &ConvertingStorage,
    key: &str,
    opts: &ListOptions,
) -> Result<ListResult> {
    let limit = opts
        .limit
        .filter(|&l| l > 0 && opts.recursive)
        .map(|l| l as usize);
    let mut page_opts = ListOptions {
        predicate: Predicate::everything(),
        ..opts.clone()
    };
    let mut result = ListResult::default();
    loop {
        let page = this.inner.list(key, &page_opts).await?;
        if result.resource_version == 0 {
            result.resource_version = page.resource_version;
        }
        let served = this.served_items(&page.items)?;
        let total = served.len();
        for (i, obj) in served.into_iter().enumerate() {
            if !opts.predicate.matches(&obj.selectable_value()?) {
                continue;
            }
            result.items.push(obj);
            let full = limit.is_some_and(|l| result.items.len() >= l);
            if full && (i + 1 < total || page.continue_token.is_some()) {
                let last = &result.items[result.items.len() - 1];
                let key_prefix = format!("{}/", key.trim_end_matches('/'));
                let next = format!("{}\0", last.key);
                result.continue_token = Some(encode_continue(
                    &next,
                    &key_prefix,
                    result.resource_version as i64,
                )?);
                return Ok(result);
            }
        }
        match page.continue_token {
            // Only a limited list pages, and then the page is not yet full.
            Some(token) if limit.is_some() => {
                page_opts.continue_token = Some(token);
                page_opts.resource_version = None;
                page_opts.resource_version_match = None;
            }
            _ => return Ok(result),
        }
    }
}

/// A watch of `key` through `this`, selected on the served form.
pub(super) async fn watch(
    this: &ConvertingStorage,
    key: &str,
    opts: &WatchOptions,
) -> Result<kas_storage::WatchStream> {
    use futures_util::StreamExt;

    let from_now = matches!(
        opts.resource_version.as_deref(),
        None | Some("") | Some("0")
    );
    let starts_with_state = match opts.send_initial_events {
        Some(initial) => initial,
        None => from_now,
    };
    let mut inner_opts = WatchOptions {
        predicate: Predicate::everything(),
        ..opts.clone()
    };
    let mut selected = Selected::default();
    if !starts_with_state {
        // The state the watch starts from, selected: its changes are judged against it.
        let list_opts = ListOptions {
            resource_version: (!from_now).then(|| opts.resource_version.clone()).flatten(),
            resource_version_match: (!from_now).then_some(ResourceVersionMatch::Exact),
            recursive: opts.recursive,
            ..Default::default()
        };
        let state = list(
            this,
            key,
            &ListOptions {
                predicate: opts.predicate.clone(),
                ..list_opts
            },
        )
        .await?;
        if from_now {
            inner_opts.resource_version = Some(state.resource_version.to_string());
            inner_opts.send_initial_events = None;
        }
        selected.objects = state
            .items
            .into_iter()
            .map(|o| (o.key.clone(), o))
            .collect();
    }
    let events = this.inner.watch(key, &inner_opts).await?;
    let this = this.clone();
    let predicate = opts.predicate.clone();
    Ok(Box::pin(events.filter_map(move |event| {
        let event = selected.select(&this, &predicate, event);
        std::future::ready(event)
    })))
}

/// The served form of what a watch has reported as selected, by key.
#[derive(Default)]
struct Selected {
    objects: HashMap<String, ObjectRef>,
}

impl Selected {
    /// `event` (of the stored form) as the watcher of the served form sees it.
    fn select(
        &mut self,
        this: &ConvertingStorage,
        predicate: &Predicate,
        event: WatchEvent,
    ) -> Option<WatchEvent> {
        let (obj, deleted) = match event {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => (o, false),
            WatchEvent::Deleted(o) => (o, true),
            other => return Some(other),
        };
        let was = self.objects.remove(&obj.key);
        if deleted && was.is_none() {
            return None;
        }
        let served = match this.to_served(obj) {
            Ok(served) => served,
            Err(e) => return Some(WatchEvent::Error(e)),
        };
        if deleted {
            return Some(WatchEvent::Deleted(served));
        }
        let now = match served.selectable_value() {
            Ok(v) => predicate.matches(&v),
            Err(e) => return Some(WatchEvent::Error(e)),
        };
        if now {
            self.objects.insert(served.key.clone(), served.clone());
        }
        match (was, now) {
            (Some(_), true) => Some(WatchEvent::Modified(served)),
            (None, true) => Some(WatchEvent::Added(served)),
            (Some(prev), false) => match prev.with_resource_version(served.resource_version) {
                Ok(prev) => Some(WatchEvent::Deleted(Arc::new(prev))),
                Err(e) => Some(WatchEvent::Error(e)),
            },
            (None, false) => None,
        }
    }
}
