module example.com/__NAME__

go 1.21
