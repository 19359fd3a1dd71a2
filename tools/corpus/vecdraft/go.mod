module kcp-corpus/vecdraft

go 1.26.8
