// The cooperative-matrix layer: 16x16x16 fp16 x fp16 + fp32 on one subgroup, as
// GL_NV_cooperative_matrix (Debian 12's glslang) or GL_KHR_cooperative_matrix
// (PA_COOPMAT_KHR, newer glslang). Only this file differs between the two.
#ifndef PA_COOPMAT_GLSL
#define PA_COOPMAT_GLSL

#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require

#ifdef PA_COOPMAT_KHR
#extension GL_KHR_cooperative_matrix : require
#define PA_MAT_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define PA_MAT_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define PA_MAT_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define pa_mat_load_rows(m, a, off, stride) coopMatLoad(m, a, off, stride, gl_CooperativeMatrixLayoutRowMajor)
#define pa_mat_load_cols(m, a, off, stride) coopMatLoad(m, a, off, stride, gl_CooperativeMatrixLayoutColumnMajor)
#define pa_mat_store_rows(m, a, off, stride) coopMatStore(m, a, off, stride, gl_CooperativeMatrixLayoutRowMajor)
#define pa_mat_mul_add(a, b, c) coopMatMulAdd(a, b, c)
#else
#extension GL_NV_cooperative_matrix : require
#define PA_MAT_A fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define PA_MAT_B fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define PA_MAT_C fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define pa_mat_load_rows(m, a, off, stride) coopMatLoadNV(m, a, off, stride, false)
#define pa_mat_load_cols(m, a, off, stride) coopMatLoadNV(m, a, off, stride, true)
#define pa_mat_store_rows(m, a, off, stride) coopMatStoreNV(m, a, off, stride, false)
#define pa_mat_mul_add(a, b, c) coopMatMulAddNV(a, b, c)
#endif

#endif
