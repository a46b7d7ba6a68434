// Renders a golden comment as GitHub would (GFM, via marked) into HTML at GitHub's comment
// width for a headless-Chromium screenshot; see docs/report.md ("What the PR author sees").
//
//   node docs/report-screenshot.mjs report/testdata/comment-fail.md /tmp/fail.html [open]
//        [--picture FILE] [--check "TITLE"]
//
// With "open", every <details> is drawn open, as a reader who clicked them would see it.
// --picture FILE stands in for every picture URL of the pictures branch (which the
// screenshot cannot reach); --check draws the Markdown as a check run's summary on the
// Checks tab, under TITLE, instead of as a comment, with each --annotation "PATH:LINE|TITLE|MESSAGE"
// listed under it as the Checks tab lists a run's annotations.
import { marked } from 'marked';
import fs from 'fs';
const args = process.argv.slice(4);
const opt = (name) => { const i = args.indexOf(name); return i < 0 ? '' : args[i + 1]; };
let md = fs.readFileSync(process.argv[2], 'utf8');
// --picture-repeat FILE stands in for a cross-request picture (…-vs-request-1.png), --picture
// for every other picture on the pictures branch.
if (opt('--picture-repeat')) md = md.replace(/https:\/\/github\.com\/[^"\s]+\/raw\/diffusion-check-assets\/[^"\s]+-vs-request-1\.png/g, 'file://' + opt('--picture-repeat'));
if (opt('--picture')) md = md.replace(/https:\/\/github\.com\/[^"\s]+\/raw\/diffusion-check-assets\/[^"\s]+\.png/g, 'file://' + opt('--picture'));
let html = marked.parse(md, { gfm: true });
if (args.includes('open')) html = html.replaceAll('<details>', '<details open>');
// GitHub's conversation column leaves the comment body about 860 px; the CSS follows
// github-markdown-css (14 px text, tables at the same size, cells padded 6×13 px).
const css = `
body { font-family: -apple-system,BlinkMacSystemFont,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif,"Noto Color Emoji"; font-size: 14px; line-height: 1.5; color: #1f2328; background: #fff; margin: 0; }
.box { width: 860px; box-sizing: border-box; margin: 8px; border: 1px solid #d1d9e0; border-radius: 6px; }
.hdr { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px; color: #59636e; }
.hdr b { color: #1f2328; }
.md { padding: 16px; }
h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; margin: 0 0 16px; }
h3 { font-size: 1.25em; margin: 24px 0 16px; }
p, ul { margin: 0 0 16px; } ul { padding-left: 2em; } li + li { margin-top: .25em; }
table { border-collapse: collapse; margin: 0 0 16px; display: block; width: max-content; max-width: 100%; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
th { font-weight: 600; }
tr:nth-child(2n) td { background: #f6f8fa; }
code { background: rgba(129,139,152,.12); border-radius: 6px; padding: .2em .4em; font-size: 85%; font-family: ui-monospace,SFMono-Regular,"SF Mono",Menlo,Consolas,"Liberation Mono",monospace; }
pre { background: #f6f8fa; border-radius: 6px; padding: 16px; overflow: auto; font-size: 85%; }
pre code { background: none; padding: 0; font-size: 100%; }
a { color: #0969da; text-decoration: none; }
details { margin: 0 0 8px; } summary { cursor: pointer; }
blockquote { margin: 0 0 16px; padding: 0 1em; color: #59636e; border-left: .25em solid #d1d9e0; }
`;
const check = opt('--check');
const hdr = check
  ? `<b>diffusion-check / base</b> · ❌ failed · <span>${check}</span>`
  : '<b>github-actions</b> bot commented · edited';
const esc = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const notes = args.flatMap((a, i) => (a === '--annotation' ? [args[i + 1]] : [])).map((a) => {
  const [where, title, msg] = a.split('|');
  return `<div class="ann"><b>❌ ${esc(title)}</b><br><code>${esc(where)}</code><br>${esc(msg)}</div>`;
});
const annotations = notes.length
  ? `<div class="box"><div class="hdr"><b>Annotations</b> · ${notes.length} error</div><div class="md">${notes.join('')}</div></div>`
  : '';
// The script puts the page's height in its title, for report-screenshots.sh to read with
// --dump-dom and size the window to the whole comment.
fs.writeFileSync(process.argv[3], `<!doctype html><meta charset="utf-8"><title></title><style>${css} .ann { padding: 4px 0; }</style>
<div class="box"><div class="hdr">${hdr}</div><div class="md">${html}</div></div>${annotations}
<script>document.title = String(document.documentElement.scrollHeight);</script>`);
