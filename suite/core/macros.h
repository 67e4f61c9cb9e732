#pragma once
#define LRB_CONCAT_INNER(a, b) a##b
#define LRB_CONCAT(a, b) LRB_CONCAT_INNER(a, b)
