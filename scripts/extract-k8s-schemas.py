#!/usr/bin/env python3
"""Turns the published Kubernetes schemas into the strict JSON Schemas the launch tests validate
emitted manifests against (hyperframes-core/src/test/resources/launch/schemas/, README.md there
names each source file and commit).

usage: extract-k8s-schemas.py SWAGGER_JSON PYTORCHJOB_CRD_YAML JOBSET_CRD_YAML OUT_DIR
       extract-k8s-schemas.py --dynamo DYNAMOGRAPHDEPLOYMENT_CRD_YAML OUT_DIR

Conversions, the same for all three (as yannh/kubernetes-json-schema's "standalone-strict"
variants do):
  - every object schema that lists properties and says nothing of additional ones gets
    "additionalProperties": false, so that a misspelt field fails; objects marked
    x-kubernetes-preserve-unknown-fields stay open;
  - descriptions (annotations, no part of validation) are dropped, to keep the files small;
  - int-or-string (swagger format int-or-string, CRD x-kubernetes-int-or-string) accepts a
    string or an integer, and a resource Quantity a string or a number, as the API server does.
The Kubernetes core schema keeps its definitions and $refs (#/definitions/...): only the
closure of the root type's references is kept.
"""
import json
import sys

import yaml


def strict(node):
    if isinstance(node, list):
        return [strict(n) for n in node]
    if not isinstance(node, dict):
        return node
    # A "description" annotation is a string; a field named description has a schema (a dict).
    out = {k: strict(v) for k, v in node.items()
           if not (k == "description" and isinstance(v, str))}
    if out.get("x-kubernetes-int-or-string") is True or out.get("format") == "int-or-string":
        out.pop("type", None)
        out.pop("format", None)
        out["anyOf"] = [{"type": "string"}, {"type": "integer"}]
    if ("properties" in out and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


def refs(node, found):
    if isinstance(node, dict):
        r = node.get("$ref")
        if isinstance(r, str) and r.startswith("#/definitions/"):
            found.add(r[len("#/definitions/"):])
        for v in node.values():
            refs(v, found)
    elif isinstance(node, list):
        for v in node:
            refs(v, found)


def core(swagger, root):
    defs = swagger["definitions"]
    keep, todo = set(), [root]
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep.add(name)
        found = set()
        refs(defs[name], found)
        todo.extend(found - keep)
    out = {name: strict(defs[name]) for name in sorted(keep)}
    out["io.k8s.apimachinery.pkg.api.resource.Quantity"] = {
        "anyOf": [{"type": "string"}, {"type": "number"}]}
    return {"$schema": "http://json-schema.org/draft-07/schema#",
            "$ref": "#/definitions/" + root, "definitions": out}


def crd(path, version, api_version, kind):
    with open(path) as f:
        doc = yaml.safe_load(f)
    for v in doc["spec"]["versions"]:
        if v["name"] == version:
            schema = strict(v["schema"]["openAPIV3Schema"])
            schema["$schema"] = "http://json-schema.org/draft-07/schema#"
            props = schema.setdefault("properties", {})
            props["apiVersion"] = {"type": "string", "enum": [api_version]}
            props["kind"] = {"type": "string", "enum": [kind]}
            schema["required"] = sorted(set(schema.get("required", [])) | {"apiVersion", "kind",
                                                                            "metadata", "spec"})
            return schema
    raise SystemExit("no version %s in %s" % (version, path))


def main(swagger_path, pytorchjob, jobset, out):
    with open(swagger_path) as f:
        swagger = json.load(f)
    files = {
        "deployment-apps-v1.json": core(swagger, "io.k8s.api.apps.v1.Deployment"),
        "configmap-v1.json": core(swagger, "io.k8s.api.core.v1.ConfigMap"),
        "pytorchjob-kubeflow-v1.json": crd(pytorchjob, "v1", "kubeflow.org/v1", "PyTorchJob"),
        "jobset-v1alpha2.json": crd(jobset, "v1alpha2", "jobset.x-k8s.io/v1alpha2", "JobSet"),
    }
    for name, schema in files.items():
        with open(out + "/" + name, "w") as f:
            json.dump(schema, f, indent=1, sort_keys=True)
            f.write("\n")


def dynamo(crd_path, out):
    schema = crd(crd_path, "v1beta1", "nvidia.com/v1beta1", "DynamoGraphDeployment")
    with open(out + "/dynamographdeployment-v1beta1.json", "w") as f:
        json.dump(schema, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--dynamo":
        dynamo(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5:
        main(*sys.argv[1:])
    else:
        raise SystemExit(__doc__)
