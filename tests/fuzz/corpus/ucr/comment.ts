# a comment
@problemName Toy
@timeStamps false
@missing false
@univariate true
@equalLength true
@seriesLength 4
@classLabel true low high
@data

1.0,2.0,3.0,4.0:low
4.0,3.0,2.0,1.0:high
0.5,0.5,0.5,0.5:low
