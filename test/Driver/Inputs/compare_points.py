"""Orders the points of a sweep by each named figure.

compare_points.py RESULTS.jsonl KEY...
For every KEY (a number of rapidc's JSON lines, e.g. itl_s, or a nested one
as breakdown.layer_forward_s) and every pair of points, in the order the
points were printed, prints
`KEY: LABEL_B <|=|> LABEL_A` comparing point B with the earlier point A
(equal within 1e-12 relative). Lets a test state how a setting moves a
figure without pinning the figure itself."""
import json
import sys


def figure(point, key):
    for part in key.split("."):
        point = point[part]
    return point


points = [json.loads(line) for line in open(sys.argv[1])]
for key in sys.argv[2:]:
    for i, a in enumerate(points):
        for b in points[i + 1:]:
            x, y = figure(a, key), figure(b, key)
            rel = abs(y - x) / max(abs(x), abs(y), 1e-300)
            sign = "=" if rel <= 1e-12 else "<" if y < x else ">"
            print(f"{key}: {b['label']} {sign} {a['label']}")
