# Environment for running Placeto's MPI programs on one machine (sourced by launch/ scripts).
# Open MPI refuses root unless told; oversubscription and yielding make more ranks than cores
# usable (without yield, all-reduce gets ~70x slower); one BLAS/torch thread per rank.
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OPENBLAS_NUM_THREADS=1
export OMP_NUM_THREADS=1
export MKL_NUM_THREADS=1
