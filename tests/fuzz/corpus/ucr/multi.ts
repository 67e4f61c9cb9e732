@problemName Multi
@timeStamps false
@missing false
@univariate false
@dimensions 2
@equalLength true
@seriesLength 3
@classLabel true a b c
@data
1,2,3:4,5,6:a
-1,-2,-3:0.25,1e-3,7:b
9,8,7:6,5,4:c
