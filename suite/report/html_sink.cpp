// HTML: one self-contained page that works offline (styles, data and script inline, plots
// inline SVG; nothing from elsewhere). Tables as the text sinks show them, marks as <sup>,
// failed and stopped counts in red, warnings first. The page is a place to work in: every
// table sorts by a click on a column, a filter bar narrows the tables by task, model and
// setting, and a row of a cell opens to its seeds' values (a dot plot with the mean and
// interval), a claim's row to its paired values by seed and how the verdict was reached
// (the report's data for them rides along as JSON: table.h's row keys). The same script
// counts the plots the browser laid out (data-plots-rendered on <body>) and the verdict cells
// inside the window (data-verdicts-visible), so a headless test can check every plot drew
// and every verdict shows. A point of an accuracy–cost front opens its cell's seeds in a box
// under the plot (plots.cpp puts a circle with the cell's key over each point).
#include <cmath>

#include <fmt/format.h>

#include "suite/core/version.h"
#include "suite/report/escape.h"
#include "suite/report/plots.h"
#include "suite/report/sink_factories.h"

namespace lrb {
namespace {

constexpr const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1400px;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em}
table.lrb{border-collapse:collapse;font-size:0.9em;margin:0.5em 0}
table.lrb caption{text-align:left;font-weight:600;padding:0.3em 0}
table.lrb th,table.lrb td{padding:0.25em 0.7em;border-bottom:1px solid #ddd;white-space:nowrap}
table.lrb thead th{border-bottom:2px solid #444;text-align:left}
table.lrb td.num,table.lrb th.num{text-align:right;font-variant-numeric:tabular-nums}
table.lrb td.long{white-space:normal;overflow-wrap:anywhere;min-width:14em;max-width:30em}
td.best{font-weight:700}td.alert{color:#b00020;font-weight:600}
sup.sig{color:#b05000}sup.caution{color:#666}
ul.notes{font-size:0.85em;color:#444;margin-top:0.2em}
section.warnings{background:#fff6e0;border:1px solid #e0b050;padding:0.5em 1em;margin:1em 0}
figure.plot{margin:1em 0}figure.plot svg{max-width:100%;height:auto}
figcaption{font-size:0.85em;color:#444}
.meta{color:#666;font-size:0.85em}
div.filters{position:sticky;top:0;background:#fff;padding:0.4em 0;border-bottom:1px solid #ddd;z-index:1;font-size:0.9em}
div.filters input{margin:0 1em 0 0.3em;width:12em}
th.sortable{cursor:pointer}th[aria-sort=ascending]::after{content:" ▲"}th[aria-sort=descending]::after{content:" ▼"}
tr.openable{cursor:pointer}tr.openable:hover{background:#f4f6fb}
tr.openable>td:first-child::before{content:"▸ ";color:#888}tr.open>td:first-child::before{content:"▾ "}
tr.detail>td{background:#f7f8fb;white-space:normal}table.seeds{border-collapse:collapse;font-size:0.85em;margin:0.3em 0}
table.seeds td,table.seeds th{padding:0.1em 0.6em;border-bottom:1px solid #e4e4e4}
div.plot-detail{background:#f7f8fb;border:1px solid #ddd;padding:0.2em 0.8em;margin:0.3em 0;font-size:0.9em}
)";

// Sorting, filtering and opening rows (see the top of this file). ES5, no library.
constexpr const char* kInteractiveScript = R"JS((function(){
var D={cells:[],claims:[]};
try{D=JSON.parse(document.getElementById('lrb-data').textContent);}catch(e){}
function esc(s){return String(s).replace(/[&<>"']/g,function(c){return{'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;',"'":'&#39;'}[c];});}
function fmt(v){return v===null||v===undefined||isNaN(v)?'–':(Math.abs(v)>=1e4||(v!==0&&Math.abs(v)<1e-3)?v.toExponential(3):(+v.toPrecision(4)).toString());}
function num(td){var v=td?td.getAttribute('data-v'):null;return v===null?NaN:parseFloat(v);}
function header(t){var h=t.tHead.rows[0].cells,o=[];for(var i=0;i<h.length;i++)o.push(h[i].textContent);return o;}
function dataRows(t){var o=[],r=t.tBodies[0].rows;for(var i=0;i<r.length;i++)if(!r[i].classList.contains('detail'))o.push(r[i]);return o;}
function closeAll(t){var r=t.tBodies[0].querySelectorAll('tr.detail');for(var i=0;i<r.length;i++)r[i].parentNode.removeChild(r[i]);
var o=t.tBodies[0].querySelectorAll('tr.open');for(var j=0;j<o.length;j++)o[j].classList.remove('open');}
// Sorting: a header click sorts by its column (numbers by their value, missing last), again reverses.
function sortBy(t,col,th){closeAll(t);var rows=dataRows(t),dir=th.getAttribute('aria-sort')==='ascending'?-1:1;
var numeric=rows.some(function(r){return !isNaN(num(r.cells[col]));});
rows.sort(function(a,b){if(numeric){var x=num(a.cells[col]),y=num(b.cells[col]);if(isNaN(x)&&isNaN(y))return 0;if(isNaN(x))return 1;if(isNaN(y))return -1;return (x-y)*dir;}
return (a.cells[col]?a.cells[col].textContent:'').localeCompare(b.cells[col]?b.cells[col].textContent:'')*dir;});
for(var i=0;i<rows.length;i++)t.tBodies[0].appendChild(rows[i]);
var h=t.tHead.rows[0].cells;for(var k=0;k<h.length;k++)h[k].removeAttribute('aria-sort');th.setAttribute('aria-sort',dir===1?'ascending':'descending');}
// Filtering: task, model and setting, each a case-insensitive part of the text.
function val(id){var e=document.getElementById(id);return e?e.value.trim().toLowerCase():'';}
function applyFilter(){var ft=val('lrb-filter-task'),fm=val('lrb-filter-model'),fs=val('lrb-filter-setting');
var ts=document.querySelectorAll('table.lrb');
for(var i=0;i<ts.length;i++){var t=ts[i],task=(t.getAttribute('data-task')||'').toLowerCase(),h=header(t);
var hide=ft!==''&&task!==''&&task.indexOf(ft)<0;t.parentNode.style.display=hide?'none':'';
var mi=h.indexOf('model'),si=h.indexOf('setting'),rows=dataRows(t),shown=0;closeAll(t);
for(var j=0;j<rows.length;j++){var r=rows[j];
var ok=(fm===''||mi<0||r.cells[mi].textContent.toLowerCase().indexOf(fm)>=0)&&(fs===''||si<0||r.cells[si].textContent.toLowerCase().indexOf(fs)>=0);
r.style.display=ok?'':'none';if(ok&&!hide)shown++;}
t.setAttribute('data-shown',String(shown));}}
// A dot plot: one dot per seed, the mean as a bar, the interval as a line, marks as dashes.
function dots(values,mean,ci,marks){var W=440,H=70,L=12,R=12,xs=values.slice();if(mean!==null&&mean!==undefined)xs.push(mean);
if(ci){xs.push(ci[0],ci[1]);}for(var m=0;m<marks.length;m++)xs.push(marks[m].v);
var lo=Math.min.apply(null,xs),hi=Math.max.apply(null,xs);if(!(hi>lo)){lo-=1;hi+=1;}var pad=(hi-lo)*0.05;lo-=pad;hi+=pad;
function X(v){return (L+(v-lo)/(hi-lo)*(W-L-R)).toFixed(1);}
var s='<svg class="dots" width="'+W+'" height="'+H+'" viewBox="0 0 '+W+' '+H+'" role="img"><line x1="'+L+'" x2="'+(W-R)+'" y1="50" y2="50" stroke="#999"/>';
for(var k=0;k<marks.length;k++)s+='<line x1="'+X(marks[k].v)+'" x2="'+X(marks[k].v)+'" y1="8" y2="58" stroke="#b05000" stroke-dasharray="3,3"><title>'+esc(marks[k].label+' '+fmt(marks[k].v))+'</title></line>';
if(ci)s+='<line x1="'+X(ci[0])+'" x2="'+X(ci[1])+'" y1="40" y2="40" stroke="#1f4e9c" stroke-width="2"><title>'+esc('interval ['+fmt(ci[0])+', '+fmt(ci[1])+']')+'</title></line>';
if(mean!==null&&mean!==undefined)s+='<line x1="'+X(mean)+'" x2="'+X(mean)+'" y1="32" y2="48" stroke="#1f4e9c" stroke-width="3"><title>'+esc('mean '+fmt(mean))+'</title></line>';
for(var i=0;i<values.length;i++)s+='<circle cx="'+X(values[i])+'" cy="'+(20-6*(i%3))+'" r="4" fill="#d04a02" fill-opacity="0.7"><title>'+esc(fmt(values[i]))+'</title></circle>';
s+='<text x="'+L+'" y="66" font-size="10">'+esc(fmt(lo+pad))+'</text><text x="'+(W-R)+'" y="66" font-size="10" text-anchor="end">'+esc(fmt(hi-pad))+'</text></svg>';return s;}
function cellDetail(c){var v=c.values||[],ys=v.map(function(p){return p[1];}),marks=[];
if(c.chance!==null&&c.chance!==undefined)marks.push({v:c.chance,label:'chance'});
var s='<div class="detail-body"><p><b>'+esc(c.entrant)+'</b>, '+esc(c.metric)+': '+v.length+' seed(s); mean '+fmt(c.mean)+(c.ci95?', 95 % t interval ['+fmt(c.ci95[0])+', '+fmt(c.ci95[1])+']':'')+(marks.length?', chance '+fmt(c.chance):'')+'</p>';
s+=dots(ys,c.mean,c.ci95,marks);
s+='<table class="seeds"><thead><tr><th>seed</th><th class="num">'+esc(c.metric)+'</th></tr></thead><tbody>';
for(var i=0;i<v.length;i++)s+='<tr><td>'+esc(v[i][0])+'</td><td class="num">'+esc(fmt(v[i][1]))+'</td></tr>';
return s+'</tbody></table></div>';}
function claimDetail(c){if(c.halves&&c.halves.length){var h='<div class="detail-body"><p><b>'+esc(c.name)+'</b>: '+esc(c.claimed||'')+'. <b>verdict: '+esc(c.verdict)+'</b> — '+esc(c.why||'')+'</p>';
for(var k=0;k<c.halves.length;k++)h+=claimDetail(c.halves[k]);return h+'</div>';}
var a=c.a_values||[],b=c.b_values||[],ratio=c.kind==='ratio',d=[];
for(var i=0;i<a.length;i++)d.push(ratio?a[i]/b[i]:a[i]-b[i]);
var marks=[];if(c.threshold!==null&&c.threshold!==undefined)marks.push({v:c.threshold,label:'threshold'});
if(ratio){if(c.at_most!==undefined&&c.at_most!==null)marks.push({v:c.at_most,label:'at most'});if(c.at_least!==undefined&&c.at_least!==null)marks.push({v:c.at_least,label:'at least'});}
var s='<div class="detail-body"><p><b>'+esc(c.name)+'</b>: '+esc(c.claimed||'')+' on '+esc(c.metric)+'. <b>verdict: '+esc(c.verdict)+'</b> — '+esc(c.why||'')+'</p>';
if(d.length){s+='<p>'+(ratio?'A / B':'A − B')+' by seed: '+d.length+' pair(s); estimate '+fmt(c.estimate)+(c.interval?', interval ['+fmt(c.interval[0])+', '+fmt(c.interval[1])+'] at '+fmt(100*c.confidence)+' %':'')+
(c.p_holm!==null&&c.p_holm!==undefined?', p (Holm) '+fmt(c.p_holm)+(c.family?' (step '+c.holm_step+' of '+c.family+')':''):'')+'</p>';
s+=dots(d,c.estimate,c.interval,marks);
s+='<table class="seeds"><thead><tr><th>seed</th><th class="num">A</th><th class="num">B</th><th class="num">'+(ratio?'A / B':'A − B')+'</th></tr></thead><tbody>';
for(var k=0;k<d.length;k++)s+='<tr><td>'+esc(c.seeds[k])+'</td><td class="num">'+esc(fmt(a[k]))+'</td><td class="num">'+esc(fmt(b[k]))+'</td><td class="num">'+esc(fmt(d[k]))+'</td></tr>';
s+='</tbody></table>';}
if(c.design==='sequential'&&c.looks){s+='<p>sequential: '+c.looks.length+' look(s); '+esc(c.stopped||'')+'</p>';}
if(c.seeds_needed)s+='<p>settling it would take about '+esc(c.seeds_needed)+' paired seeds</p>';
var n=c.notes||[];if(n.length){s+='<ul>';for(var j=0;j<n.length;j++)s+='<li>'+esc(n[j])+'</li>';s+='</ul>';}
return s+'</div>';}
function detailOf(key){var p=key.split(':'),i=parseInt(p[1],10);
if(p[0]==='cell'&&D.cells[i])return cellDetail(D.cells[i]);if(p[0]==='claim'&&D.claims[i])return claimDetail(D.claims[i]);return null;}
function toggle(r){var t=r.closest('table'),next=r.nextElementSibling;
if(next&&next.classList.contains('detail')){next.parentNode.removeChild(next);r.classList.remove('open');return;}
var html=detailOf(r.getAttribute('data-key'));if(html===null)return;
var d=document.createElement('tr');d.className='detail';var td=document.createElement('td');td.colSpan=r.cells.length;td.innerHTML=html;d.appendChild(td);
r.parentNode.insertBefore(d,r.nextSibling);r.classList.add('open');}
var ts=document.querySelectorAll('table.lrb');
for(var i=0;i<ts.length;i++)(function(t){var h=t.tHead.rows[0].cells;
for(var k=0;k<h.length;k++)(function(k){h[k].addEventListener('click',function(){sortBy(t,k,h[k]);});h[k].classList.add('sortable');h[k].title='sort';})(k);
var rows=dataRows(t);for(var j=0;j<rows.length;j++)if(rows[j].hasAttribute('data-key')){rows[j].classList.add('openable');
rows[j].addEventListener('click',function(e){if(e.target.closest('a'))return;toggle(this);});}})(ts[i]);
// A point of an accuracy–cost front (a circle over it, data-key "cell:N") opens its cell's seeds in a box under the figure.
var hs=document.querySelectorAll('figure.plot circle[data-key]');
for(var p=0;p<hs.length;p++)hs[p].addEventListener('click',function(){var fig=this.closest('figure'),html=detailOf(this.getAttribute('data-key'));if(html===null)return;
var box=fig.querySelector('div.plot-detail');if(!box){box=document.createElement('div');box.className='plot-detail';fig.insertBefore(box,fig.querySelector('figcaption'));}
box.setAttribute('data-key',this.getAttribute('data-key'));box.innerHTML=html;});
var f=['lrb-filter-task','lrb-filter-model','lrb-filter-setting'];
for(var q=0;q<f.length;q++){var e=document.getElementById(f[q]);if(e)e.addEventListener('input',applyFilter);}
})();
)JS";

constexpr const char* kCheckScript = R"(
(function(){var f=document.querySelectorAll('figure.plot'),ok=0;
for(var i=0;i<f.length;i++){var s=f[i].querySelector('svg');if(!s)continue;var b=s.getBBox();
if(b.width>0&&b.height>0&&s.querySelectorAll('path,use,text').length>0)ok++;}
document.body.setAttribute('data-plots',String(f.length));document.body.setAttribute('data-plots-rendered',String(ok));
var v=document.querySelectorAll('td.verdict'),seen=0;
for(var j=0;j<v.length;j++){var r=v[j].getBoundingClientRect();if(r.width>0&&r.right<=window.innerWidth)seen++;}
document.body.setAttribute('data-verdicts',String(v.length));document.body.setAttribute('data-verdicts-visible',String(seen));
var c=document.querySelectorAll('table.lrb td'),over=0,first='';
for(var k=0;k<c.length;k++){var g=document.createRange();g.selectNodeContents(c[k]);var t=g.getBoundingClientRect(),d=c[k].getBoundingClientRect();
if(t.width>0&&(t.right>d.right+0.5||t.left<d.left-0.5)){over++;if(!first)first=c[k].textContent;}}
document.body.setAttribute('data-cells-overflowing',String(over));if(first)document.body.setAttribute('data-overflow-first',first);})();
)";

// What the page's rows open to, from the report's data: each cell's values by seed with its
// mean, interval and chance level, and each claim whole (with its paired values).
nlohmann::json page_data(const nlohmann::json& data) {
  nlohmann::json out = {{"cells", nlohmann::json::array()}, {"claims", nlohmann::json::array()}};
  if (const auto cells = data.find("cells"); cells != data.end() && cells->is_array())
    for (const auto& c : *cells) {
      nlohmann::json values = nlohmann::json::array();
      for (const auto& v : c.value("values", nlohmann::json::array())) values.push_back({v.value("seed", 0), v.value("value", 0.0)});
      out["cells"].push_back({{"entrant", c.value("entrant", "")},
                              {"metric", c.value("metric", "")},
                              {"mean", c.value("mean", nlohmann::json())},
                              {"ci95", c.value("ci95", nlohmann::json())},
                              {"chance", c.value("chance", nlohmann::json())},
                              {"values", std::move(values)}});
    }
  if (const auto claims = data.find("claims"); claims != data.end() && claims->is_array()) out["claims"] = *claims;
  return out;
}

// JSON inside <script>: no '<' may close the element or open a comment.
std::string script_safe_json(const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

std::string number_attribute(double v) { return std::isfinite(v) ? fmt::format(" data-v=\"{:.17g}\"", v) : ""; }

// Longer texts (a claim's statement and source) wrap within their cell.
constexpr std::size_t kLongText = 48;

class HtmlSink final : public ReportSink {
 public:
  void write(const Report& report, std::ostream& out) override {
    const std::vector<Plot> plots = make_plots(report.data());
    out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        << "<title>" << html_escape(report.title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
    out << "<h1>" << html_escape(report.title) << "</h1>\n";
    out << "<p class=\"meta\">lrbench " << html_escape(lrbench_version()) << " (git " << html_escape(git_revision())
        << (git_dirty() ? ", dirty" : "") << ")</p>\n";
    if (!report.warnings.empty()) {
      out << "<section class=\"warnings\" id=\"warnings\">\n<h2>Warnings</h2>\n<ul>\n";
      for (const auto& w : report.warnings) out << "<li>" << html_escape(w) << "</li>\n";
      out << "</ul>\n</section>\n";
    }
    out << "<nav><ul>\n";
    for (const auto& t : report.tables) out << "<li><a href=\"#" << html_escape(t.id) << "\">" << html_escape(t.title) << "</a></li>\n";
    if (!plots.empty()) out << "<li><a href=\"#plots\">Plots</a></li>\n";
    out << "</ul></nav>\n";
    out << "<div class=\"filters\" id=\"lrb-filters\">filter: <label>task<input id=\"lrb-filter-task\" type=\"search\"></label>"
        << "<label>model<input id=\"lrb-filter-model\" type=\"search\"></label>"
        << "<label>setting<input id=\"lrb-filter-setting\" type=\"search\"></label>"
        << "<span class=\"meta\">a click on a column sorts it; a row marked ▸ opens to its seeds</span></div>\n";
    for (const auto& t : report.tables) table(t, out);
    if (!plots.empty()) {
      out << "<section id=\"plots\">\n<h2>Plots</h2>\n";
      for (const auto& p : plots) {
        out << "<figure class=\"plot\" id=\"" << html_escape(p.id) << "\" data-kind=\"" << html_escape(p.kind) << "\">\n"
            << p.svg << "\n<figcaption>" << html_escape(p.caption) << "</figcaption>\n</figure>\n";
      }
      out << "</section>\n";
    }
    out << "<script type=\"application/json\" id=\"lrb-data\">" << script_safe_json(page_data(report.data())) << "</script>\n";
    out << "<script>" << kInteractiveScript << kCheckScript << "</script>\n</body>\n</html>\n";
  }

 private:
  static void table(const Table& t, std::ostream& out) {
    out << "<section>\n<table class=\"lrb\" id=\"" << html_escape(t.id) << "\""
        << (t.task.empty() ? "" : " data-task=\"" + html_escape(t.task) + "\"") << ">\n<caption>" << html_escape(t.title)
        << "</caption>\n<thead><tr>";
    std::vector<bool> numeric(t.columns.size());
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      numeric[c] = numeric_column(t, c);
      out << "<th" << (numeric[c] ? " class=\"num\"" : "") << ">" << html_escape(t.columns[c]) << "</th>";
    }
    out << "</tr></thead>\n<tbody>\n";
    const bool keyed = t.row_keys.size() == t.rows.size();
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      const auto& row = t.rows[r];
      out << (keyed && !t.row_keys[r].empty() ? "<tr data-key=\"" + html_escape(t.row_keys[r]) + "\">" : std::string("<tr>"));
      for (std::size_t c = 0; c < row.size(); ++c) {
        const TableCell& cell = row[c];
        std::string cls = c < numeric.size() && numeric[c] ? "num" : "";
        if (c < t.columns.size() && t.columns[c] == "verdict") cls += " verdict";
        if (cell.text.size() > kLongText) cls += " long";  // wraps instead of widening the table
        if (cell.best) cls += " best";
        if (cell.alert) cls += " alert";
        out << "<td" << (cls.empty() ? "" : " class=\"" + cls + "\"") << (cell.value ? number_attribute(*cell.value) : "") << ">"
            << html_escape(cell.text);
        if (cell.best) out << "<sup class=\"best\">" << kBestMark << "</sup>";
        if (cell.marked) out << "<sup class=\"sig\" title=\"significant\">" << kSignificantMark << "</sup>";
        if (cell.caution) out << "<sup class=\"caution\" title=\"small n\">" << kCautionMark << "</sup>";
        out << "</td>";
      }
      out << "</tr>\n";
    }
    out << "</tbody>\n</table>\n";
    if (!t.notes.empty()) {
      out << "<ul class=\"notes\">\n";
      for (const auto& n : t.notes) out << "<li>" << html_escape(n) << "</li>\n";
      out << "</ul>\n";
    }
    out << "</section>\n";
  }
};

ReportFormat html_format() {
  return {"html", {".html", ".htm"}, "one self-contained page: the tables and gnuplot plots inlined as SVG",
          [](bool) { return std::unique_ptr<ReportSink>(std::make_unique<HtmlSink>()); }};
}

}  // namespace

LRB_REGISTER_REPORT_FORMAT(60, html_format());

}  // namespace lrb
