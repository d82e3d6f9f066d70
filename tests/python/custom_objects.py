"""The official Python client's ApiextensionsV1Api and CustomObjectsApi against the
aggregator: a CRD created and established, custom objects created, read, listed, patched
(merge and the status subresource), scaled, watched and deleted. Exits non-zero, with the
reason, on the first difference from upstream."""

import sys
import threading
import time

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

GROUP, VERSION, PLURAL = "stable.example.com", "v1", "crontabs"


def crd() -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": PLURAL, "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]},
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {
                        "status": {},
                        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
                    },
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "cronSpec": {"type": "string"},
                                        "image": {"type": "string"},
                                        "replicas": {"type": "integer", "default": 1},
                                    },
                                },
                                "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
                            },
                        }
                    },
                }
            ],
        },
    }


def main(kubeconfig: str) -> None:
    config.load_kube_config(config_file=kubeconfig)
    ext = client.ApiextensionsV1Api()
    created = ext.create_custom_resource_definition(crd())
    assert created.metadata.name == f"{PLURAL}.{GROUP}", created.metadata
    deadline = time.time() + 5
    while True:
        got = ext.read_custom_resource_definition(f"{PLURAL}.{GROUP}")
        conditions = {c.type: c.status for c in (got.status.conditions or [])}
        if conditions.get("Established") == "True":
            break
        assert time.time() < deadline, conditions
        time.sleep(0.05)
    assert got.status.accepted_names.kind == "CronTab", got.status.accepted_names

    api = client.CustomObjectsApi()
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "CronTab",
        "metadata": {"name": "py-cron", "labels": {"app": "py"}},
        "spec": {"cronSpec": "* * * * */5", "image": "my-cron-image"},
    }
    deadline = time.time() + 2
    while True:
        try:
            obj = api.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
            break
        except ApiException as e:
            assert e.status == 404 and time.time() < deadline, e
            time.sleep(0.05)
    assert obj["spec"]["replicas"] == 1, obj  # the schema's default
    assert obj["metadata"]["generation"] == 1, obj["metadata"]

    got = api.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "py-cron")
    assert got["spec"]["image"] == "my-cron-image", got

    events = []

    def watch_it() -> None:
        w = watch.Watch()
        for event in w.stream(
            api.list_namespaced_custom_object,
            GROUP,
            VERSION,
            "default",
            PLURAL,
            label_selector="app=py",
            resource_version=got["metadata"]["resourceVersion"],
            timeout_seconds=10,
        ):
            events.append((event["type"], event["object"]["metadata"]["name"]))
            if event["type"] == "DELETED":
                w.stop()

    watcher = threading.Thread(target=watch_it)
    watcher.start()
    time.sleep(0.3)

    patched = api.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "py-cron", {"spec": {"image": "new-image"}}
    )
    assert patched["spec"]["image"] == "new-image", patched
    assert patched["metadata"]["generation"] == 2, patched["metadata"]

    status = api.patch_namespaced_custom_object_status(
        GROUP, VERSION, "default", PLURAL, "py-cron", {"status": {"replicas": 1}}
    )
    assert status["status"] == {"replicas": 1}, status
    assert status["metadata"]["generation"] == 2, status["metadata"]

    scale = api.patch_namespaced_custom_object_scale(
        GROUP, VERSION, "default", PLURAL, "py-cron", {"spec": {"replicas": 3}}
    )
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 3, scale

    listed = api.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)
    assert listed["kind"] == "CronTabList", listed["kind"]
    assert [i["metadata"]["name"] for i in listed["items"]] == ["py-cron"], listed
    assert listed["items"][0]["apiVersion"] == f"{GROUP}/{VERSION}", listed["items"][0]
    everywhere = api.list_cluster_custom_object(GROUP, VERSION, PLURAL)
    assert len(everywhere["items"]) == 1, everywhere

    try:
        api.create_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, dict(body, spec={"replicas": "three"})
        )
        raise AssertionError("an invalid object was created")
    except ApiException as e:
        assert e.status == 422, e

    api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "py-cron")
    watcher.join(timeout=15)
    # From the read's resourceVersion: the patch, the status and the scale, then the deletion.
    assert events == [("MODIFIED", "py-cron")] * 3 + [("DELETED", "py-cron")], events

    ext.delete_custom_resource_definition(f"{PLURAL}.{GROUP}")
    deadline = time.time() + 10
    while True:
        try:
            ext.read_custom_resource_definition(f"{PLURAL}.{GROUP}")
        except ApiException as e:
            assert e.status == 404, e
            break
        assert time.time() < deadline, "the CRD was not deleted"
        time.sleep(0.1)
    print("python custom objects ok")


if __name__ == "__main__":
    main(sys.argv[1])
