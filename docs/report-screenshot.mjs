// Renders a golden comment as GitHub would (GFM, via marked) into HTML at GitHub's comment
// width for a headless-Chromium screenshot; see docs/report.md ("What the PR author sees").
//
//   node docs/report-screenshot.mjs report/testdata/comment-fail.md /tmp/fail.html [open]
//
// With "open", every <details> is drawn open, as a reader who clicked them would see it.
import { marked } from 'marked';
import fs from 'fs';
const md = fs.readFileSync(process.argv[2], 'utf8');
let html = marked.parse(md, { gfm: true });
if (process.argv[4] === 'open') html = html.replaceAll('<details>', '<details open>');
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
// The script puts the page's height in its title, for report-screenshots.sh to read with
// --dump-dom and size the window to the whole comment.
fs.writeFileSync(process.argv[3], `<!doctype html><meta charset="utf-8"><title></title><style>${css}</style>
<div class="box"><div class="hdr"><b>github-actions</b> bot commented · edited</div><div class="md">${html}</div></div>
<script>document.title = String(document.documentElement.scrollHeight);</script>`);
