// The HTML report's sorting, filtering and opening rows (suite/report/html_sink.cpp explains
// what the page does), compiled into lrbench. ES5, no library.
(function(){
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
