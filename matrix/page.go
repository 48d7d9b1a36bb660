package matrix

// pageHTML is index.html: no request leaves it (no font, script or style
// from elsewhere); the script sorts and filters, and reads the filters
// from the URL's fragment (#provider=openai&behaviour=retried.429:yes&group=retried&sort=maxRetries)
// so a filtered view can be linked to.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Retry matrix</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0;padding:12px;color:#1b1b1b;background:#fff}
h1{font-size:20px;margin:0 0 6px}
p.legend{max-width:60em;color:#444;font-size:13px}
.controls{display:flex;flex-wrap:wrap;gap:8px;margin:8px 0}
.controls label{display:flex;flex-direction:column;font-size:12px;color:#444}
.controls select,.controls input{font-size:15px;padding:4px;min-height:32px}
.wrap{overflow-x:auto;-webkit-overflow-scrolling:touch;border:1px solid #ddd}
table{border-collapse:collapse;font-size:13px}
th,td{border-bottom:1px solid #eee;padding:4px 6px;text-align:left;white-space:nowrap;vertical-align:top}
th{background:#f6f6f6;cursor:pointer;position:sticky;top:0;user-select:none}
th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
td.client,th.client{position:sticky;left:0;background:#fff;z-index:1;border-right:1px solid #ddd}
th.client{background:#f6f6f6;z-index:2}
td.known a,td.known span.t{color:#1b1b1b}
td.s-unknown{color:#8a5a00;background:#fff8e6}
td.s-not-probed,td.s-n-a{color:#999}
td.v-yes{background:#eef8ee}td.v-no{background:#fbeeee}
td.changed{outline:2px solid #c00;outline-offset:-2px}
td.changed::before{content:"Δ ";color:#c00;font-weight:bold}
sup{color:#555}
details{margin:6px 0;max-width:60em}
details li{margin:2px 0}
.hidden{display:none}
@media (max-width:600px){body{padding:6px}th,td{padding:3px 4px;font-size:12px}}
</style>
</head>
<body>
<h1>Retry matrix</h1>
<p class="legend">Probed by retrylab {{.Retrylab}}.{{if .Against}} Changes are against {{.Against}}.{{end}} {{.Legend}}</p>
<div class="controls">
<label>provider<select id="f-provider"><option value="">all</option>{{range .Providers}}<option>{{.}}</option>{{end}}</select></label>
<label>behaviour<select id="f-behaviour"><option value="">any</option>{{range .Filters}}<option value="{{.Key}}:{{.Value}}">{{.Title}}: {{.Value}}</option>{{end}}</select></label>
<label>columns<select id="f-group"><option value="">all</option>{{range .Groups}}<option>{{.}}</option>{{end}}</select></label>
<label>client<input id="f-text" type="search" placeholder="name"></label>
</div>
<div class="wrap">
<table id="matrix">
<thead><tr><th class="client" data-key="client">client</th><th data-key="version">version</th><th data-key="provider">provider</th>{{range .Columns}}<th data-key="{{.Key}}" data-group="{{.Group}}" title="{{.Doc}}">{{.Title}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr data-client="{{.Name}}" data-provider="{{.Provider}}">
<td class="client" data-v="{{.Name}}"><a href="#{{.Anchor}}">{{.Name}}</a></td><td data-v="{{.Version}}"{{if .Changed}} class="changed"{{end}}>{{.Version}}</td><td data-v="{{.Provider}}">{{.Provider}}</td>
{{range .Cells}}<td data-key="{{.Key}}" data-group="{{.Group}}" data-v="{{.Value}}" data-t="{{.Text}}" class="s-{{.State}} v-{{.Value}}{{if eq .State "known"}} known{{end}}{{if .Changed}} changed{{end}}" title="{{if .Change}}changed: {{.Change}}. {{end}}{{.Conf}}{{if .Conf}}: {{end}}{{.Basis}}">{{if .Link}}<a href="{{.Link}}">{{.Text}}</a>{{else}}<span class="t">{{.Text}}</span>{{end}}{{if .Mark}}<sup>{{.Mark}}</sup>{{end}}</td>{{end}}
</tr>
{{end}}</tbody>
</table>
</div>
<h2>Evidence</h2>
{{range .Rows}}<details id="{{.Anchor}}" data-client="{{.Name}}"><summary>{{.Name}} {{.Version}} ({{.Provider}}){{if .Wall}}, probed in {{.Wall}}{{end}}</summary>
{{if .Error}}<p>Not probed: {{.Error}}</p>{{end}}
{{if .Changes}}<p>Changes:</p><ul>{{range .Changes}}<li>Δ <code>{{.Column}}</code>: {{.Before}} → {{.After}}</li>{{end}}</ul>{{end}}
<ul>{{range .Cells}}{{if or (eq .State "known") (eq .State "unknown")}}<li><b>{{.Key}}</b>: {{.Text}} ({{if .Conf}}{{.Conf}}{{else}}{{.State}}{{end}}){{if .Basis}}: {{.Basis}}{{end}}{{if .Link}} — <a href="{{.Link}}">result.json</a>{{end}}</li>{{end}}{{end}}</ul>
</details>
{{end}}
<script>
window.addEventListener("error",function(ev){document.body.setAttribute("data-js-error",String(ev.message));});
(function(){
var table=document.getElementById("matrix"),tbody=table.tBodies[0];
var fp=document.getElementById("f-provider"),fb=document.getElementById("f-behaviour"),fg=document.getElementById("f-group"),ft=document.getElementById("f-text");
var sortKey="",sortDir=1;
function cellOf(tr,key){
  if(key==="client")return tr.cells[0];if(key==="version")return tr.cells[1];if(key==="provider")return tr.cells[2];
  return tr.querySelector('td[data-key="'+key+'"]');
}
function apply(){
  var p=fp.value,b=fb.value,g=fg.value,t=ft.value.toLowerCase(),bk="",bv="";
  if(b){var i=b.indexOf(":");bk=b.slice(0,i);bv=b.slice(i+1);}
  Array.prototype.forEach.call(tbody.rows,function(tr){
    var show=(!p||tr.dataset.provider===p)&&(!t||tr.dataset.client.toLowerCase().indexOf(t)>=0);
    if(show&&bk){var c=cellOf(tr,bk);show=!!c&&c.dataset.t===bv;}
    tr.classList.toggle("hidden",!show);
  });
  table.querySelectorAll("[data-group]").forEach(function(el){el.classList.toggle("hidden",!!g&&el.dataset.group!==g);});
  var h=[];if(p)h.push("provider="+encodeURIComponent(p));if(b)h.push("behaviour="+encodeURIComponent(b));
  if(g)h.push("group="+encodeURIComponent(g));if(sortKey)h.push("sort="+encodeURIComponent((sortDir<0?"-":"")+sortKey));
  var nh=h.length?"#"+h.join("&"):"";if(location.hash!==nh&&(nh||location.hash))history.replaceState(null,"",nh||location.pathname);
}
function num(v){var n=parseFloat(String(v).replace(/^>=/,""));return isNaN(n)?null:n;}
function sortBy(key,dir){
  sortKey=key;sortDir=dir;
  var rows=Array.prototype.slice.call(tbody.rows);
  rows.sort(function(a,b){
    var ca=cellOf(a,key),cb=cellOf(b,key),va=ca?ca.dataset.v:"",vb=cb?cb.dataset.v:"";
    if(va===""&&vb!=="")return 1;if(vb===""&&va!=="")return -1;
    var na=num(va),nb=num(vb);
    if(na!==null&&nb!==null)return (na-nb)*dir;
    return va.localeCompare(vb)*dir;
  });
  rows.forEach(function(r){tbody.appendChild(r);});
  table.tHead.querySelectorAll("th").forEach(function(th){
    if(th.dataset.key===key)th.setAttribute("aria-sort",dir>0?"ascending":"descending");else th.removeAttribute("aria-sort");
  });
  apply();
}
table.tHead.addEventListener("click",function(ev){
  var th=ev.target.closest("th");if(!th)return;sortBy(th.dataset.key,sortKey===th.dataset.key?-sortDir:1);
});
[fp,fb,fg].forEach(function(el){el.addEventListener("change",apply);});ft.addEventListener("input",apply);
var h=location.hash.slice(1).split("&");
h.forEach(function(kv){var i=kv.indexOf("=");if(i<0)return;var k=kv.slice(0,i),v=decodeURIComponent(kv.slice(i+1));
  if(k==="provider")fp.value=v;if(k==="behaviour")fb.value=v;if(k==="group")fg.value=v;
  if(k==="sort"){if(v.charAt(0)==="-")sortBy(v.slice(1),-1);else sortBy(v,1);}
});
apply();
document.body.dataset.ready="1";
})();
</script>
</body>
</html>
`
