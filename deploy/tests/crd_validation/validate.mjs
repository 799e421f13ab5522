// Validates custom resources against the validators @kubernetes-models
// generates from each project's CRDs (KEDA, Prometheus operator).
//
//   node validate.mjs < objects.json
//
// Input: a JSON array of objects. Output: a JSON array, one entry per
// object: {"kind", "name", "errors": [...]} ("unknown" when no validator
// covers its apiVersion and kind). Exit 0 whatever the verdicts: the caller
// (deploy/tests/test_schemas.py) judges them.
import { readFileSync } from "node:fs";

const MODELS = {
  "keda.sh/v1alpha1": "@kubernetes-models/keda/keda.sh/v1alpha1",
  "monitoring.coreos.com/v1": "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1",
};

const objects = JSON.parse(readFileSync(0, "utf8"));
const verdicts = [];
for (const object of objects) {
  const name = object?.metadata?.name ?? "";
  const module = MODELS[object.apiVersion];
  if (!module) {
    verdicts.push({ kind: object.kind, name, errors: ["unknown"] });
    continue;
  }
  const models = await import(module);
  const Model = models[object.kind];
  if (typeof Model !== "function") {
    verdicts.push({ kind: object.kind, name, errors: ["unknown"] });
    continue;
  }
  try {
    new Model(object).validate();
    verdicts.push({ kind: object.kind, name, errors: [] });
  } catch (error) {
    verdicts.push({ kind: object.kind, name, errors: [String(error.message ?? error)] });
  }
}
process.stdout.write(JSON.stringify(verdicts));
