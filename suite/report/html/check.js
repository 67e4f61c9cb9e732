// What a headless test reads off the page (suite/report/html_sink.cpp): the plots the browser
// laid out, the verdict cells inside the window, and the cells whose text runs over their edge.
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
