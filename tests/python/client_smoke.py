"""The official Python client against the aggregator: list, create, read, patch, watch,
delete, server-side apply. Exits non-zero, with the reason, on the first difference from upstream."""

import sys
import threading
import time

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException


def main(kubeconfig: str) -> None:
    config.load_kube_config(config_file=kubeconfig)
    v1 = client.CoreV1Api()
    names = {ns.metadata.name for ns in v1.list_namespace().items}
    assert {"default", "kube-system"} <= names, names

    body = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="py-demo", labels={"app": "py"}),
        data={"greeting": "hello"},
    )
    created = v1.create_namespaced_config_map("default", body)
    assert created.metadata.uid and created.metadata.resource_version, created

    got = v1.read_namespaced_config_map("py-demo", "default")
    assert got.data == {"greeting": "hello"}, got.data

    events = []

    def watch_it() -> None:
        w = watch.Watch()
        for event in w.stream(
            v1.list_namespaced_config_map,
            "default",
            label_selector="app=py",
            resource_version=got.metadata.resource_version,
            timeout_seconds=10,
        ):
            events.append((event["type"], event["object"].metadata.name))
            if event["type"] == "DELETED":
                w.stop()

    t = threading.Thread(target=watch_it)
    t.start()
    time.sleep(1)

    patched = v1.patch_namespaced_config_map("py-demo", "default", {"data": {"extra": "1"}})
    assert patched.data == {"greeting": "hello", "extra": "1"}, patched.data

    listed = v1.list_namespaced_config_map("default", label_selector="app=py")
    assert [c.metadata.name for c in listed.items] == ["py-demo"], listed.items

    try:
        v1.create_namespaced_config_map("default", body)
        raise AssertionError("second create succeeded")
    except ApiException as e:
        assert e.status == 409, e.status
        assert '"reason":"AlreadyExists"' in e.body, e.body

    v1.delete_namespaced_config_map("py-demo", "default")
    t.join(15)
    assert events == [("MODIFIED", "py-demo"), ("DELETED", "py-demo")], events

    try:
        v1.read_namespaced_config_map("py-demo", "default")
        raise AssertionError("read after delete succeeded")
    except ApiException as e:
        assert e.status == 404, e.status

    # Server-side apply, as the client sends it: the dict as JSON under the apply
    # content type. The first apply creates, a conflicting one is a 409 unless forced.
    desired = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "py-applied"},
        "data": {"mode": "a"},
    }
    apply = {"field_manager": "py-controller", "_content_type": "application/apply-patch+yaml"}
    applied = v1.patch_namespaced_config_map("py-applied", "default", desired, **apply)
    assert applied.data == {"mode": "a"}, applied.data
    entry = applied.metadata.managed_fields[0]
    assert (entry.manager, entry.operation) == ("py-controller", "Apply"), entry
    v1.patch_namespaced_config_map("py-applied", "default", {"data": {"mode": "b"}})
    try:
        v1.patch_namespaced_config_map("py-applied", "default", desired, **apply)
        raise AssertionError("conflicting apply succeeded")
    except ApiException as e:
        assert e.status == 409, e.status
        assert "Apply failed with 1 conflict" in e.body, e.body
    forced = v1.patch_namespaced_config_map("py-applied", "default", desired, force=True, **apply)
    assert forced.data == {"mode": "a"}, forced.data
    print("python client ok")


if __name__ == "__main__":
    main(sys.argv[1])
