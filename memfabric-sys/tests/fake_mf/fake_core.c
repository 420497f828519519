/* A stand-in libmf_hybm_core.so: the one symbol the fake libmf_smem.so
 * needs from it. Written for this project. */
int fake_core_marker(void) { return 0; }
