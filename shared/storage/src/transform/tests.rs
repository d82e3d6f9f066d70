use serde_json::json;

use super::*;
use crate::WatchEvent;
use crate::fake::ListWatchFake;

fn defaulting() -> ReadFn {
    Arc::new(|v: &mut Value| {
        if let Some(spec) = v.get_mut("spec").and_then(Value::as_object_mut) {
            spec.entry("replicas").or_insert(json!(1));
            spec.remove("unknown");
        }
    })
}

#[tokio::test]
async fn lists_and_watch_events_are_rewritten_and_writes_pass() {
    let fake = Arc::new(ListWatchFake::default());
    fake.set_list(
        "/crs",
        &[
            json!({"metadata": {"name": "a"}, "spec": {"unknown": true}}),
            json!({"metadata": {"name": "b"}, "spec": {"replicas": 3}}),
        ],
    );
    let storage = ReadTransform::new(fake.clone(), defaulting());
    let opts = ListOptions {
        recursive: true,
        ..ListOptions::default()
    };
    let list = storage.list("/crs", &opts).await.unwrap();
    let specs: Vec<Value> = list
        .items
        .iter()
        .map(|o| o.value().unwrap()["spec"].clone())
        .collect();
    assert_eq!(specs, vec![json!({"replicas": 1}), json!({"replicas": 3})]);
    assert_eq!(list.items[0].resource_version, 1, "the revision is kept");

    let mut events = storage
        .watch("/crs", &WatchOptions::default())
        .await
        .unwrap();
    let obj = fake.object("/crs/c", &json!({"metadata": {"name": "c"}, "spec": {}}));
    fake.send("/crs", || WatchEvent::Modified(obj.clone()));
    fake.send("/crs", || WatchEvent::Bookmark(9));
    match events.next().await {
        Some(WatchEvent::Modified(o)) => {
            assert_eq!(o.value().unwrap()["spec"], json!({"replicas": 1}));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(matches!(events.next().await, Some(WatchEvent::Bookmark(9))));

    // An object the transform leaves alone is the same shared object.
    let same = fake.object("/crs/d", &json!({"spec": {"replicas": 2}}));
    assert!(Arc::ptr_eq(&rewrite(&defaulting(), same.clone()), &same));
    // Objects written after the settled revision are not decoded again.
    let settled = ReadTransform::new(fake.clone(), defaulting()).settled_after(2);
    let list = settled.list("/crs", &opts).await.unwrap();
    assert_eq!(
        list.items[0].value().unwrap()["spec"],
        json!({"replicas": 1})
    );
    let late = fake.object("/crs/f", &json!({"spec": {"unknown": 1}}));
    assert!(Arc::ptr_eq(&settled.read(late.clone()), &late));

    // Writes go to the inner storage untouched (the fake refuses them).
    assert!(storage.create("/crs/e", json!({}), None).await.is_err());
}
