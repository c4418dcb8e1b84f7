// The coordinator's live page in headless Chromium, against a running cluster
// (tests/browser/run.sh starts it): the page loads with no console error, shows the
// cluster's workers, and its progress moves while a batch runs.
//   node page.mjs PAGE_URL GRPC_URL CUBESWARM_BINARY WORKER_ID... [--screenshot PNG]
import { chromium } from "playwright-core";
import { spawn } from "node:child_process";

const args = process.argv.slice(2);
const shotAt = args.indexOf("--screenshot");
const shot = shotAt >= 0 ? args.splice(shotAt, 2)[1] : null;
const [pageUrl, grpcUrl, bin, ...workers] = args;
const fail = (m) => { console.error("FAIL " + m); process.exitCode = 1; };

// A batch whose input the test feeds: it runs as long as we keep its stdin open.
const scrambles = ["R U", "F2 D' L", "U R2 F B'", "L D2 B", "R' F U2", "D B2 L'", "F R' D2", "B U' L2"];
const client = spawn(bin, ["solve", "--coordinator", grpcUrl, "--method", "twophase", "--quiet",
  "--input", "-", "--output", "/dev/null"], { stdio: ["pipe", "ignore", "inherit"] });
const feed = (n) => { for (let i = 0; i < n; i++) client.stdin.write(scrambles[i % scrambles.length] + "\n"); };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const errors = [];
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 760 } });
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("requestfailed", (r) => errors.push("request failed: " + r.url()));
  const resp = await page.goto(pageUrl);
  if (!resp || resp.status() !== 200) fail("page: HTTP " + (resp && resp.status()));
  const text = async (sel) => (await page.textContent(sel)) || "";
  const until = async (what, cond, ms = 20000) => {
    const end = Date.now() + ms;
    while (Date.now() < end) { if (await cond()) return true; await page.waitForTimeout(200); }
    fail(what + " not within " + ms + " ms");
    return false;
  };
  // The workers of the cluster.
  await until("the workers shown", async () => {
    const t = await text("#workers");
    return workers.every((w) => t.includes(w));
  });
  console.log("ok   the page shows the workers " + workers.join(", "));
  // Progress moves while the batch runs.
  feed(10);
  await until("10 records shown", async () => (await text("#requests")).includes("10/10+"));
  const first = await page.$eval("#requests .bar > div", (e) => e.style.width).catch(() => "none");
  feed(30);
  await until("40 records shown", async () => (await text("#requests")).includes("40/40+"));
  console.log("ok   the request's progress moved from 10/10 to 40/40 (bar " + first + ")");
  await until("a request event", async () => (await text("#events")).includes("opened a request"));
  await until("throughput drawn", async () => (await page.$("#chart polyline")) !== null);
  console.log("ok   events and the throughput chart are drawn");
  if (shot) {
    // Keep it busy for the picture: a larger batch, a few seconds of throughput.
    feed(3000);
    await page.waitForTimeout(5000);
    await page.screenshot({ path: shot });
    console.log("screenshot: " + shot);
  }
  client.stdin.end();
  await until("the request done", async () => (await text("#events")).includes("request done"), 60000);
  console.log("ok   the request's end is in the events");
} finally {
  await browser.close();
  client.kill();
}
if (errors.length) fail("console errors: " + errors.join(" | "));
else console.log("ok   no console errors");
