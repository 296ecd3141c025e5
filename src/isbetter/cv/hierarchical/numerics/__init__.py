"""What both backends compute with: quadrature kernels, nu-prior and sigma-bound tables."""
