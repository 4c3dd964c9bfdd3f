#!/usr/bin/env bash
# dashboards_check.sh PROJECT_SOURCE_DIR
#
# Checks dashboards/ without a Grafana:
# - btsim.json parses, has the DS_PROMETHEUS and bigtable_instance
#   variables, and every panel a title and a query;
# - every PromQL expression parses (promtool check rules on a rules file
#   made of them, with Grafana's variables substituted);
# - every bigtable_* series it queries is one metrics/instance_metrics.h
#   declares (so a renamed metric cannot leave a panel silently empty);
# - prometheus.yml is a valid Prometheus configuration.
# Exits 77 (skipped) when promtool or python3 is missing.
set -u -o pipefail

SRC=${1:?usage: dashboards_check.sh PROJECT_SOURCE_DIR}
PROMTOOL=${PROMTOOL:-$(command -v promtool || true)}
if [[ -z $PROMTOOL ]]; then
  echo "SKIP: promtool not found (Debian package prometheus)"
  exit 77
fi
if ! command -v python3 >/dev/null; then
  echo "SKIP: python3 not found"
  exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/btsim-dash.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

python3 - "$SRC/dashboards/btsim.json" "$SRC/metrics/instance_metrics.h" \
  "$WORK/rules.json" <<'EOF' || exit 1
import json, re, sys

dashboard_path, header_path, rules_path = sys.argv[1:4]
errors = []
with open(dashboard_path) as f:
    dashboard = json.load(f)  # raises (and fails the test) on bad JSON

variables = {v["name"]: v for v in dashboard["templating"]["list"]}
for name in ("DS_PROMETHEUS", "bigtable_instance"):
    if name not in variables:
        errors.append(f"no template variable {name}")
if not isinstance(dashboard.get("schemaVersion"), int):
    errors.append("no schemaVersion")

def all_panels(panels):
    for p in panels:
        yield p
        yield from all_panels(p.get("panels", []))

exprs = []
for p in all_panels(dashboard["panels"]):
    if p["type"] == "row":
        continue
    if not p.get("title"):
        errors.append(f"panel {p.get('id')} has no title")
    if p.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
        errors.append(f"panel {p['title']!r}: datasource is not ${{DS_PROMETHEUS}}")
    targets = p.get("targets", [])
    if not targets:
        errors.append(f"panel {p['title']!r} has no query")
    for t in targets:
        exprs.append((p["title"], t["expr"]))

declared = set(re.findall(r"\bbigtable_[a-z_]+", open(header_path).read()))
def substitute(expr):
    expr = expr.replace("$__rate_interval", "1m")
    return re.sub(r"\$\{?([A-Za-z_]+)\}?", ".*", expr)

rules = []
for i, (title, expr) in enumerate(exprs):
    rules.append({"record": f"btsim:dashboard_query_{i}", "expr": substitute(expr)})
    for name in re.findall(r"\bbigtable_[a-z_]+", expr):
        if name in ("bigtable_instance",):
            continue  # the label
        base = re.sub(r"_(bucket|count|sum)$", "", name)
        if name not in declared and base not in declared:
            errors.append(f"panel {title!r} queries {name}, which "
                          "metrics/instance_metrics.h does not declare")

with open(rules_path, "w") as f:
    json.dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)
print(f"{len(exprs)} queries in {sum(1 for p in all_panels(dashboard['panels']) if p['type'] != 'row')} panels")
for e in errors:
    print("FAIL:", e)
sys.exit(1 if errors else 0)
EOF

# Rules files are YAML, of which JSON is a subset.
"$PROMTOOL" check rules "$WORK/rules.json" || {
  echo "FAIL: a dashboard query does not parse"
  exit 1
}
"$PROMTOOL" check config "$SRC/dashboards/prometheus.yml" || {
  echo "FAIL: dashboards/prometheus.yml"
  exit 1
}
echo "PASS"
