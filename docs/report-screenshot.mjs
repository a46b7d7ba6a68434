// Renders a golden comment as GitHub would (GFM, via marked) into HTML for a headless-Chromium
// screenshot; see docs/report.md ("What the PR author sees").
import { marked } from 'marked';
import fs from 'fs';
const md = fs.readFileSync(process.argv[2], 'utf8');
let html = marked.parse(md, { gfm: true });
// Open the first failure block, as a reader who clicked it would see it.
let opened = 0;
html = html.replace(/<details><summary>❌/g, m => (opened++ < 1 ? '<details open><summary>❌' : m));
const css = `
body { font-family: -apple-system,BlinkMacSystemFont,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif,"Noto Color Emoji"; font-size: 14px; line-height: 1.5; color: #1f2328; background: #fff; margin: 0; }
.box { max-width: 1380px; margin: 16px; border: 1px solid #d1d9e0; border-radius: 6px; }
.hdr { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px; color: #59636e; }
.hdr b { color: #1f2328; }
.md { padding: 16px; }
h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; margin-top: 0; }
h3 { font-size: 1.25em; margin: 24px 0 16px; }
table { border-collapse: collapse; margin: 0 0 16px; display: block; overflow: auto; font-size: 13px; }
th, td { border: 1px solid #d1d9e0; padding: 4px 10px; }
th { font-weight: 600; background: #f6f8fa; }
tr:nth-child(2n) td { background: #f6f8fa; }
code { background: rgba(129,139,152,.12); border-radius: 6px; padding: .2em .4em; font-size: 85%; font-family: ui-monospace,SFMono-Regular,Menlo,monospace; }
pre { background: #f6f8fa; border-radius: 6px; padding: 12px; overflow: auto; }
pre code { background: none; padding: 0; }
a { color: #0969da; text-decoration: none; }
details { margin: 8px 0; } summary { cursor: pointer; }
`;
fs.writeFileSync(process.argv[3], `<!doctype html><meta charset="utf-8"><style>${css}</style>
<div class="box"><div class="hdr"><b>github-actions</b> bot commented · edited</div><div class="md">${html}</div></div>`);
