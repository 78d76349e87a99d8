// The donor translation unit of the precompiled headers (cmake/Pch.cmake):
// it only carries the .gch that the targets REUSE_FROM.
